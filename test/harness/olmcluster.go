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
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Environment variables that point at the binaries of an OLM cluster,
// filled in by 'make olm-e2e' from hack/ensure.sh.
const (
	EnvKubeDir = "VKO_KUBE_DIR" // kube-controller-manager, kube-scheduler
	EnvKwokBin = "VKO_KWOK_BIN"
	EnvOLMDir  = "VKO_OLM_DIR" // olm, catalog
	EnvOPMBin  = "VKO_OPM_BIN"
	EnvHelmBin = "VKO_HELM_BIN" // the Helm install test's helm
)

// OLMCluster is a cluster that OLM can install into, with no container
// runtime: kube-apiserver and etcd, kube-controller-manager (deployments,
// replicasets, endpointslices) and kube-scheduler, kwok faking one Node and
// running its pods at IPs in PodCIDR, and OLM's olm and catalog operators,
// all local processes. A process started here in the place of a pod (Start)
// answers at the pod's IP.
type OLMCluster struct {
	Env        *envtest.Environment
	Config     *rest.Config
	Client     client.Client
	Kubeconfig string
	logDir     string
	procs      []*Process
	podNetwork bool // this cluster added the pod network's route
}

// StartOLMCluster starts it all; Stop ends it all.
func StartOLMCluster(ctx context.Context, logDir string) (*OLMCluster, error) {
	for _, v := range []string{EnvKubeDir, EnvKwokBin, EnvOLMDir, EnvOPMBin, "KUBEBUILDER_ASSETS"} {
		if err := requireFile(os.Getenv(v), "OLM cluster", v); err != nil {
			return nil, err
		}
	}
	olmCRDs, err := moduleDir("olm", "github.com/operator-framework/operator-lifecycle-manager")
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(olmCRDs, "deploy", "chart", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	// The API server calls a webhook Service's endpoints, not its cluster
	// IP: nothing routes cluster IPs here.
	env.ControlPlane.GetAPIServer().Configure().Set("enable-aggregator-routing", "true")
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	c := &OLMCluster{Env: env, Config: cfg, logDir: logDir}
	fail := func(err error) (*OLMCluster, error) { c.Stop(); return nil, err }
	if c.podNetwork, err = addPodNetwork(); err != nil {
		return fail(err)
	}
	if c.Client, err = client.New(cfg, client.Options{}); err != nil {
		return fail(err)
	}
	if c.Kubeconfig, err = writeAdminKubeconfig(env, logDir); err != nil {
		return fail(err)
	}

	procs, err := startWorkloadProcesses(c.Kubeconfig, logDir, "deployment,replicaset,endpointslice")
	c.procs = append(c.procs, procs...)
	if err != nil {
		return fail(err)
	}
	olmDir := os.Getenv(EnvOLMDir)
	for _, p := range []struct {
		name string
		env  []string
		bin  string
		args []string
	}{
		// OLM reads KUBECONFIG from the environment only; with CI set, its
		// own validating round-tripper panics on objects it did not label.
		{"olm", []string{"KUBECONFIG=" + c.Kubeconfig, "OPERATOR_NAMESPACE=" + OLMNamespace, "OPERATOR_NAME=olm-operator", "CI="},
			filepath.Join(olmDir, "olm"), []string{"--namespace=" + OLMNamespace, "--writeStatusName="}},
		// An InstallPlan that fails (a refused CRD update) is retried for
		// this long before it is marked Failed: long enough for a test to
		// mend the cause, as an admin would, and see the plan go through.
		{"catalog", []string{"CI="}, filepath.Join(olmDir, "catalog"), []string{
			"--kubeconfig=" + c.Kubeconfig, "--namespace=" + OLMNamespace, "--writeStatusName=", "--install-plan-retry-timeout=5m"}},
	} {
		if p.name == "olm" {
			// Both operators need the namespace they run for.
			if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OLMNamespace}}); err != nil {
				return fail(err)
			}
		}
		proc, err := start(p.name, logDir, p.env, p.bin, p.args...)
		if err != nil {
			return fail(err)
		}
		c.procs = append(c.procs, proc)
	}
	return c, nil
}

// OLMNamespace is where OLM's operators and the CatalogSource live.
const OLMNamespace = "olm"

// PodCIDR is where kwok gives its pods their IPs. The whole range is
// routed to this machine itself ("ip route add local"), so a process here
// that listens on a pod's port, on every address, answers at that pod's IP:
// the manager run in the place of the operator's pod serves its webhooks
// where the API server calls them. The API server calls a webhook
// Service's endpoints (--enable-aggregator-routing), and the endpoints are
// the pod IPs. Why not 127.0.0.0/8, which needs no route: Kubernetes
// refuses loopback addresses as endpoints, so the EndpointSlice stays
// empty. 203.0.113.0/24 is TEST-NET-3, reserved for documentation; not
// 192.0.2.0/24, which this machine's own network uses.
const PodCIDR = "203.0.113.0/24"

// addPodNetwork routes PodCIDR to this machine, and says whether this call
// added the route: one that exists already is used as it is and left in
// place. It needs CAP_NET_ADMIN, which the OLM test has in the network
// namespace of its own it runs in (RunInOwnNetwork), without root.
func addPodNetwork() (added bool, err error) {
	// Routing a network this machine sits on to itself would cut it off.
	_, pods, _ := net.ParseCIDR(PodCIDR)
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && pods.Contains(ip.IP) {
			return false, fmt.Errorf("this machine has the address %s, inside the fake pod network %s: change harness.PodCIDR", ip, PodCIDR)
		}
	}
	out, err := exec.Command("ip", "route", "add", "local", PodCIDR, "dev", "lo").CombinedOutput()
	switch {
	case err == nil:
		return true, nil
	case strings.Contains(string(out), "File exists"):
		return false, nil
	default:
		return false, fmt.Errorf("route the fake pod network %s (needs CAP_NET_ADMIN: run in a network namespace of its own, see harness.RunInOwnNetwork; and iproute2): ip route add local %s dev lo: %w: %s",
			PodCIDR, PodCIDR, err, strings.TrimSpace(string(out)))
	}
}

func removePodNetwork() {
	_ = exec.Command("ip", "route", "del", "local", PodCIDR, "dev", "lo").Run()
}

// Start runs a process beside the cluster (the manager, in the place of
// its pod); Stop ends it with the rest, and Logs shows its output.
func (c *OLMCluster) Start(name string, env []string, bin string, args ...string) (*Process, error) {
	proc, err := start(name, c.logDir, env, bin, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, proc)
	return proc, nil
}

// Stop ends every process, then the control plane.
func (c *OLMCluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop()
	}
	if c.podNetwork {
		removePodNetwork()
	}
	KeepCluster(c.Client)
	_ = c.Env.Stop()
}

// Logs returns the last lines of each process's output, for failures.
func (c *OLMCluster) Logs(lines int) string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "--- %s\n%s\n", p.name, p.LogTail(lines))
	}
	return b.String()
}

// ServeCatalog runs 'opm serve' on a catalog directory and returns its
// address, for a CatalogSource's spec.address.
func (c *OLMCluster) ServeCatalog(ctx context.Context, dir string) (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	pprof, err := FreePort()
	if err != nil {
		return "", err
	}
	// A fresh cache directory has no digest to check: build it, don't enforce it.
	proc, err := start("opm-serve-"+strconv.Itoa(port), c.logDir, nil, os.Getenv(EnvOPMBin), "serve", dir, "--port", strconv.Itoa(port),
		"--cache-dir", filepath.Join(c.logDir, "opm-cache-"+strconv.Itoa(port)), "--cache-enforce-integrity=false",
		"--pprof-addr", "127.0.0.1:"+strconv.Itoa(pprof))
	if err != nil {
		return "", err
	}
	c.procs = append(c.procs, proc)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := waitTLS(ctx, addr, 60*1e9); err != nil {
		return "", fmt.Errorf("opm serve: %w\n%s", err, proc.LogTail(20))
	}
	return addr, nil
}

// moduleDir is where a tool module's dependency lies in the module cache
// (OLM's CRDs and kwok's stages ship inside their modules).
func moduleDir(tool, module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-json", module)
	cmd.Dir = filepath.Join(RepoRoot(), "hack", "tools", tool)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate %s: %w", module, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("locate %s: no directory in %s", module, out)
	}
	return m.Dir, nil
}
