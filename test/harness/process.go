/*
Copyright 2026 The vault-keycloak-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package harness starts the real services the tests and the demo run
// against — a Vault dev server, a Keycloak dev server, a local control plane —
// as local processes on 127.0.0.1, waits until each answers, and stops them.
package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a service started by the harness.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
}

// start runs a command in its own process group, its output in a log file
// under logDir, so that Stop can end it with every child it spawned
// (kc.sh starts a JVM).
func start(name, logDir string, env []string, bin string, args ...string) (*Process, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &Process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	// The manager's log is what the operator wrote for people to read:
	// kept for the run's secret sweep once the process ends.
	keep := filepath.Base(bin) == "manager"
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		if keep {
			KeepHaystack("log of "+name, p.Log())
		}
		close(p.done)
	}()
	return p, nil
}

// Stop ends the process group: SIGTERM, then SIGKILL after a grace period.
func (p *Process) Stop() {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Kill ends the process group at once (SIGKILL), as a node failure or an
// OOM kill would: nothing is flushed, no lease is handed back.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Log returns the process's whole output so far.
func (p *Process) Log() string {
	data, _ := os.ReadFile(p.logPath)
	return string(data)
}

// LogTail returns the last lines of the process's output, for error messages.
func (p *Process) LogTail(lines int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// waitHTTP polls url until it answers with a status below 500, the process
// exits, or a minute passes.
func (p *Process) waitHTTP(ctx context.Context, url string) error {
	return p.waitHTTPTrusting(ctx, url, "")
}

// waitHTTPTrusting is waitHTTP for an HTTPS url whose certificate the CA
// in caFile signed; the file may appear only once the server started (a
// dev server writes its own), so it is read at each try.
func (p *Process) waitHTTPTrusting(ctx context.Context, url, caFile string) error {
	return p.waitHTTPStatusVia(ctx, url, time.Minute, caFile, func(code int) bool { return code < 500 })
}

// waitHTTPStatus polls url until its status is one ok accepts, the
// process exits, or the timeout passes.
func (p *Process) waitHTTPStatus(ctx context.Context, url string, timeout time.Duration, ok func(int) bool) error {
	return p.waitHTTPStatusVia(ctx, url, timeout, "", ok)
}

func (p *Process) waitHTTPStatusVia(ctx context.Context, url string, timeout time.Duration, caFile string, ok func(int) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if caFile != "" && client.Transport == nil {
			client.Transport = trusting(caFile) // nil until the server wrote it
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if ok(resp.StatusCode) {
				return nil
			}
		}
		if p.Exited() {
			return fmt.Errorf("%s exited before it answered on %s; last output:\n%s", p.name, url, p.LogTail(30))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer on %s within %s; last output:\n%s", p.name, url, timeout, p.LogTail(30))
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now,
// chosen below the kernel's ephemeral range. A port of that range (what
// listening on port 0 gives) is also the source port of any outgoing
// connection, and may be taken by one before the process it was picked
// for binds it: CI53 lost a test so, the webhook port of a cluster bound
// seconds after it was picked.
func FreePort() (int, error) {
	low := ephemeralLow()
	if low-portsFrom < 1000 {
		return listenedPort() // a range set unusually low: the kernel's pick
	}
	for range 200 {
		port := portsFrom + rand.IntN(low-portsFrom)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		_ = l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port between %d and %d", portsFrom, low)
}

// portsFrom is the lowest port FreePort picks.
const portsFrom = 10000

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if fields := strings.Fields(string(data)); err == nil && len(fields) == 2 {
		if low, err := strconv.Atoi(fields[0]); err == nil {
			return low
		}
	}
	return 32768
}

func listenedPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that nothing listens
// on now, as FreePort picks them.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for len(ports) < n {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	return ports, nil
}

// retryWhilePortTaken runs start up to three times while it fails because
// its process could not bind a port. Ports are picked free (FreePort), then
// bound by the process a moment later; a test package running beside this
// one may take the port in between. start returns the process it started
// (stopped on failure), if any.
func retryWhilePortTaken(start func() (*Process, error)) error {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		proc, err := start()
		if err == nil || attempt == attempts || proc == nil || !proc.Exited() ||
			!strings.Contains(strings.ToLower(proc.Log()), "address already in use") {
			return err
		}
	}
}

// requireFile fails with what to run when a component is not built.
func requireFile(path, what, envVar string) error {
	if path == "" {
		return fmt.Errorf("%s: %s is not set; run the tests with 'make test', which builds it into the cache and sets it", what, envVar)
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s: %s=%s: %w; run 'make test' (or hack/ensure.sh) to build it", what, envVar, path, err)
	}
	return nil
}

var errNotConfigured = errors.New("not configured")

// waitTLS waits until something accepts TCP connections on addr.
func waitTLS(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s: %w", addr, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// trusting is a transport that trusts only the CA in caFile; nil while
// the file holds no certificate yet (a dev server writes its own as it
// starts).
func trusting(caFile string) http.RoundTripper {
	pem, err := os.ReadFile(caFile)
	pool := x509.NewCertPool()
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		return nil
	}
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
}
