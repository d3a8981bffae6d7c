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

package harness

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The OLM test routes a fake pod network to the machine (see PodCIDR),
// which needs CAP_NET_ADMIN. Rather than ask for root, it runs in a network
// namespace of its own, inside an unprivileged user namespace where it is
// root over that network alone (unshare --user --map-root-user --net). The
// machine's routes are never touched.
//
// Inside, only a loopback exists: services that run outside for the whole
// test run (the run's Keycloak) are forwarded in, at the same address,
// through Unix sockets — a socket in the filesystem crosses network
// namespaces.

// envNetnsForwards, set in the child, lists "host:port=socket" pairs to
// serve inside; its presence marks the child.
const envNetnsForwards = "VKO_NETNS_FORWARDS"

// InOwnNetwork reports whether this process is the child RunInOwnNetwork
// started.
func InOwnNetwork() bool {
	_, ok := os.LookupEnv(envNetnsForwards)
	return ok
}

// RunInOwnNetwork runs this test binary again, with the same arguments, in
// a new user and network namespace, forwarding the URLs' host:port into
// it, and returns the exit code to exit with. Output goes straight through.
func RunInOwnNetwork(urls ...string) int {
	dir, err := os.MkdirTemp("", "vko-netns-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()

	var forwards []string
	for i, u := range urls {
		if u == "" {
			continue // not configured: the test itself says what is missing
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Host == "" {
			fmt.Fprintf(os.Stderr, "forward %q into the test's network: not a URL with a host\n", u)
			return 1
		}
		sock := filepath.Join(dir, fmt.Sprintf("fwd-%d.sock", i))
		l, err := net.Listen("unix", sock)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = l.Close() }()
		go serve(l, "tcp", parsed.Host) // outside: socket → the real service
		forwards = append(forwards, parsed.Host+"="+sock)
	}

	cmd := exec.Command("unshare", append([]string{"--user", "--map-root-user", "--net", "--", os.Args[0]}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), envNetnsForwards+"="+strings.Join(forwards, ","))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "run the test in a network namespace of its own (unshare --user --map-root-user --net, from util-linux; "+
			"some systems restrict unprivileged user namespaces, e.g. kernel.apparmor_restrict_unprivileged_userns): %v\n", err)
		return 1
	}
}

// ownHostAddress is this network's own address besides the loopback:
// kube-apiserver refuses to start without a default route to an interface
// with a global address (it advertises that address). TEST-NET-2, on the
// loopback: nothing leaves the namespace.
const ownHostAddress = "198.51.100.1/32"

// SetUpOwnNetwork, in the child, brings the loopback up, gives the network
// a host address and a default route, and serves the forwards at their
// addresses. It returns an error the test should fail on.
func SetUpOwnNetwork() error {
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", ownHostAddress, "dev", "lo"},
		{"route", "add", "default", "dev", "lo"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("set up the test's network (iproute2): ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	for _, f := range strings.Split(os.Getenv(envNetnsForwards), ",") {
		if f == "" {
			continue
		}
		addr, sock, _ := strings.Cut(f, "=")
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("forward %s into the test's network: %w", addr, err)
		}
		go serve(l, "unix", sock) // inside: the service's address → socket
	}
	return nil
}

// serve copies each connection accepted on l to a new connection to addr.
func serve(l net.Listener, network, addr string) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = in.Close() }()
			out, err := net.Dial(network, addr)
			if err != nil {
				return
			}
			defer func() { _ = out.Close() }()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
			go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
			<-done
		}()
	}
}
