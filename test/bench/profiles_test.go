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

package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// profileWindow is how long a run's profiles last: within the run at
// P1's 1,000 objects (some 10 s), longer where runs take minutes.
func profileWindow(n int) time.Duration {
	return max(8*time.Second, time.Duration(n)*3*time.Millisecond)
}

// vaultProfileMax is the longest CPU profile Vault serves: it refuses one
// longer than its default max request duration (90 s).
const vaultProfileMax = 85 * time.Second

// profileRun saves, under out (the manager's CPU profile; ".kube-apiserver"
// and ".vault" beside it), the CPU profiles of the three processes over
// one window of a run of n objects, and each one's allocations at the
// window's start and end (".allocs.0", ".allocs.1": compare them with
// `go tool pprof -sample_index=alloc_space -diff_base X.allocs.0 X.allocs.1`).
//
// Why the window starts once half the run's objects are created: what
// grows faster than the objects shows late in a run of 50,000, when the
// fleet is large; a window from the start saw the small fleet of the
// first minute. Both runs of a pair then hold the same number of objects
// in the window, and all three processes share it (Vault's bound: 85 s).
func (f *fleet) profileRun(b *testing.B, out string, n int, created *atomic.Int64) {
	for created.Load() < int64(n/2) {
		time.Sleep(100 * time.Millisecond)
	}
	d := min(profileWindow(n), vaultProfileMax)
	f.allocs(b, out, ".allocs.0")
	var cpu sync.WaitGroup
	cpu.Go(func() { f.profile(out, d) })
	cpu.Go(func() { f.profileAPIServer(b, out+".kube-apiserver", d) })
	cpu.Go(func() { f.profileVault(b, out+".vault", d) })
	cpu.Wait()
	f.allocs(b, out, ".allocs.1")
}

// allocs saves the three processes' allocation profiles (cumulative since
// each one started) with suffix.
func (f *fleet) allocs(b *testing.B, out, suffix string) {
	if data, err := f.managerPprof("allocs", 0); err == nil {
		_ = os.WriteFile(out+suffix, data, 0o644)
	}
	if data, err := f.apiServerPprof("allocs", 0); err != nil {
		b.Logf("kube-apiserver allocations: %v", err)
	} else {
		_ = os.WriteFile(out+".kube-apiserver"+suffix, data, 0o644)
	}
	if data, err := f.vaultPprof("allocs", 0); err != nil {
		b.Logf("Vault allocations: %v", err)
	} else {
		_ = os.WriteFile(out+".vault"+suffix, data, 0o644)
	}
}

// profile saves a CPU profile of the manager (VKO_BENCH_PROFILE: where),
// for finding where an operator run's time goes.
func (f *fleet) profile(out string, d time.Duration) {
	if data, err := f.managerPprof("profile", d); err == nil {
		_ = os.WriteFile(out, data, 0o644)
	}
}

// profileAPIServer saves a CPU profile of kube-apiserver: on two cores
// the API server takes most of a run's CPU, so where it goes decides the
// run's time.
func (f *fleet) profileAPIServer(b *testing.B, out string, d time.Duration) {
	data, err := f.apiServerPprof("profile", d)
	if err != nil {
		b.Logf("kube-apiserver profile: %v", err)
		return
	}
	_ = os.WriteFile(out, data, 0o644)
}

// profileVault saves a CPU profile of the Vault server: past 10,000
// VaultApps Vault's CPU per request grows, and this says where. A
// profile longer than vaultProfileMax is cut to it.
func (f *fleet) profileVault(b *testing.B, out string, d time.Duration) {
	data, err := f.vaultPprof("profile", min(d, vaultProfileMax))
	if err != nil {
		b.Logf("Vault profile: %v", err)
		return
	}
	_ = os.WriteFile(out, data, 0o644)
}

// seconds is pprof's query for a profile of d (none for a snapshot).
func seconds(d time.Duration) url.Values {
	q := url.Values{}
	if d > 0 {
		q.Set("seconds", strconv.Itoa(int(d.Seconds())))
	}
	return q
}

// managerPprof reads one of the manager's pprof endpoints (every bench
// manager serves them: --pprof-bind-address).
func (f *fleet) managerPprof(name string, d time.Duration) ([]byte, error) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s?%s", f.manager.PprofAddr, name, seconds(d).Encode()))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	return io.ReadAll(resp.Body)
}

// apiServerPprof reads one of kube-apiserver's own pprof endpoints, as the
// cluster admin.
func (f *fleet) apiServerPprof(name string, d time.Duration) ([]byte, error) {
	cfg := rest.CopyConfig(f.cluster.Config)
	cfg.GroupVersion, cfg.NegotiatedSerializer = &schema.GroupVersion{}, scheme.Codecs
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req := rc.Get().AbsPath("/debug/pprof/" + name).Timeout(d + 20*time.Second)
	if d > 0 {
		req = req.Param("seconds", strconv.Itoa(int(d.Seconds())))
	}
	return req.DoRaw(context.Background())
}

// vaultPprof reads one of Vault's sys/pprof endpoints with the root token.
func (f *fleet) vaultPprof(name string, d time.Duration) ([]byte, error) {
	admin, err := f.vault.AdminClient()
	if err != nil {
		return nil, err
	}
	admin.SetClientTimeout(d + 20*time.Second)
	resp, err := admin.Logical().ReadRawWithDataWithContext(context.Background(), "sys/pprof/"+name, seconds(d))
	if resp != nil {
		defer func() { _ = resp.Body.Close() }()
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(resp.Body)
}
