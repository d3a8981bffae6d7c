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
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The single replica's ceiling (`make bench-scale`, opt-in: not in CI).
const (
	scaleNamespaces = 5000
	// scaleClients is how many Keycloak clients the credentials read: a
	// realm of 5,000 clients is Keycloak's limit to measure, not ours.
	scaleClients = 100
	// scaleRefresh is every object's refreshInterval: the product's
	// default. At the bench's 45 s, 100,000 objects would ask for 2,200
	// reads a second, which no single replica on two cores serves.
	scaleRefresh = 10 * time.Minute
	// scaleWindow is the least a restarted manager or a shard is given for
	// its first pass (more at 20 ms per object).
	scaleWindow = 2 * time.Minute
	// scaleTarget is the bound on operator / bare client at scale: P1's
	// and P7's, so that what grows faster than linearly misses it.
	scaleTarget = 1.3
	// scaleShards is how many shards S6 runs side by side.
	scaleShards = 4
)

// BenchmarkScale measures one replica with VKO_SCALE VaultApps and as many
// KeycloakClientCredentials over 5,000 namespaces (with 10,000 unrelated
// Secrets): each kind's time to all Ready against the bare client at that
// size (one pair each: a run of minutes is not moved by a second of noise),
// the API-server requests per object meanwhile, its peak RSS per 1,000
// objects, a restarted manager's start-up and the requests of its first
// pass, and each shard's peak RSS with 4. The table is written whatever
// phase fails (a run is long). See docs/benchmarks.md.
func BenchmarkScale(b *testing.B) {
	n, err := strconv.Atoi(cmp.Or(os.Getenv("VKO_SCALE"), "0"))
	if err != nil || n < 0 {
		b.Fatalf("VKO_SCALE=%q: want a number of objects of each kind", os.Getenv("VKO_SCALE"))
	}
	if n == 0 {
		b.Skip("opt-in: make bench-scale (VKO_SCALE objects of each kind)")
	}
	kinds, err := scaleKindsOf(os.Getenv("VKO_SCALE_KINDS"), n)
	if err != nil {
		b.Fatal(err)
	}
	shape = fleetShape{Namespaces: scaleNamespaces, Size: n, Unrelated: 10000, Clients: scaleClients, Refresh: scaleRefresh,
		FeatureGates: "ShardedListAndWatch=true"}
	defer func() { shape = benchShape }()
	started := time.Now()
	f := newFleet(b)
	defer f.stopManager()
	f.spent.lap("setup")
	r := &report{Date: time.Now().UTC(), Machine: machine(), Raw: map[string]any{"shape": shape, "kinds": kinds}}
	defer func() {
		r.add("—", "the whole run (reported; where its time went)", true, "—", "%s (%s)", time.Since(started).Round(time.Second), f.spent)
		r.write(b)
	}()

	f.auditSince(b)
	var requests []string
	if kinds.Apps > 0 {
		apps := f.converge(b, defaultWorkers, n, 1, true)
		requests = append(requests, f.managerRequests(b, "VaultApps", n))
		r.Raw["S1-vaultapps"] = apps
		r.add("S1", fmt.Sprintf("%d VaultApps created at once → all Ready: operator / limit", n), apps.Ratio() <= scaleTarget, fmt.Sprintf("≤ %.1f×", scaleTarget),
			"%.2f× (%s / %s); Vault requests per object: operator %v, limit %v", apps.Ratio(), apps.Operator.Round(time.Second), apps.Limit.Round(time.Second), apps.OperatorVault, apps.LimitVault)
		f.spent.lap("S1 VaultApps")
	}
	if kinds.Creds > 0 {
		creds := f.convergeCredentials(b, n, 1, true)
		requests = append(requests, f.managerRequests(b, "credentials", n))
		r.Raw["S1-credentials"] = creds
		r.add("S1", fmt.Sprintf("%d KeycloakClientCredentials created at once → all Ready: operator / bare client", n), creds.Ratio() <= scaleTarget, fmt.Sprintf("≤ %.1f×", scaleTarget),
			"%.2f× (%s / %s); Keycloak requests per credential: operator %v, bare %v", creds.Ratio(), creds.Operator.Round(time.Second), creds.Limit.Round(time.Second), creds.OperatorKeycloak, creds.LimitKeycloak)
		f.spent.lap("S1 credentials")
	}
	r.add("S2", "API-server requests of the manager per object while they converged (both runs of each pair, the standby's included)", true, "reported",
		"%s", strings.Join(requests, " / "))

	// Memory of the manager that held the fleet through the last run.
	rss, err := f.manager.PeakRSS()
	if err != nil {
		b.Fatal(err)
	}
	r.Raw["S5-peakRSSBytes"] = rss
	r.add("S5", fmt.Sprintf("peak RSS (VmHWM) with %s, %d Secrets it wrote, %d unrelated", kinds.describe(), kinds.Creds, shape.Unrelated), true, "reported",
		"%.0f MiB, %.1f MiB per 1,000 objects", float64(rss)/(1<<20), float64(rss)/(1<<20)/(float64(kinds.Apps+kinds.Creds)/1000))

	st := f.restartMeasured(b, kinds)
	r.Raw["S3"] = st
	r.add("S3", "a restarted manager, from the process start: caches synced (both object controllers' workers started) / first object reconciled / every object reconciled once", true, "reported",
		"%s / %s / %s", st.Synced.Round(100*time.Millisecond), st.FirstReconcile.Round(100*time.Millisecond), st.PassDone.Round(100*time.Millisecond))
	r.add("S4", "writes in that first pass, the fleet in step: Vault / Keycloak / API server (by verb and resource)", st.Vault["write"]+st.Keycloak["write"]+st.APIWrites == 0, "0 / 0 / 0",
		"%d / %d / %d %v", st.Vault["write"], st.Keycloak["write"], st.APIWrites, st.API.Writes)
	vaultReads, keycloakReads := perKind(st.Vault["read"], kinds.Apps), perKind(st.Keycloak["read"], kinds.Creds)
	r.add("S4", "reads per object in that pass (a refresh costs the same): Vault per VaultApp / Keycloak per credential / API server per object", vaultReads <= 2 && keycloakReads <= 2, "≤ 2 / ≤ 2 / reported",
		"%.2f / %.2f / %.3f", vaultReads, keycloakReads, perKind(st.APIReads, kinds.Apps+kinds.Creds))
	f.spent.lap("S3 and S4")

	shardRSS := f.shardsMemory(b, scaleShards, kinds)
	r.Raw["S6-peakRSSBytesByShard"] = shardRSS
	var byShard []string
	for i, v := range shardRSS {
		byShard = append(byShard, fmt.Sprintf("shard %d: %.0f MiB (%.2f of one replica's)", i, float64(v)/(1<<20), float64(v)/float64(rss)))
	}
	r.add("S6", fmt.Sprintf("peak RSS of each of %d shards (the API server's sharded watch on), once their caches synced and their first pass done", scaleShards), true, "reported",
		"%s", strings.Join(byShard, "; "))
	f.spent.lap("S6 shards")
}

// scaleKinds is how many objects of each kind bench-scale measures.
type scaleKinds struct {
	Apps  int `json:"vaultApps"`
	Creds int `json:"credentials"`
}

// describe says what a run holds, for the table.
func (k scaleKinds) describe() string {
	var parts []string
	if k.Apps > 0 {
		parts = append(parts, fmt.Sprintf("%d VaultApps", k.Apps))
	}
	if k.Creds > 0 {
		parts = append(parts, fmt.Sprintf("%d credentials", k.Creds))
	}
	return strings.Join(parts, " and ")
}

// scaleKindsOf reads VKO_SCALE_KINDS: "vaultapps", "credentials", or both
// (the default, comma-separated). One kind alone halves a run, which at
// 50,000 is hours.
func scaleKindsOf(env string, n int) (scaleKinds, error) {
	var k scaleKinds
	for _, kind := range strings.Split(cmp.Or(env, "vaultapps,credentials"), ",") {
		switch strings.TrimSpace(kind) {
		case "vaultapps":
			k.Apps = n
		case "credentials":
			k.Creds = n
		default:
			return k, fmt.Errorf("SCALE_KINDS (VKO_SCALE_KINDS)=%q: want vaultapps, credentials or both, comma-separated", env)
		}
	}
	return k, nil
}

// perKind is count per object of a kind, 0 where there is none.
func perKind(count, objects int) float64 {
	if objects == 0 {
		return 0
	}
	return float64(count) / float64(objects)
}

// managerRequests says the manager's requests per object in the audit log
// since the last reading (its leader election's Lease apart), and how many
// of its writes were refused.
func (f *fleet) managerRequests(b *testing.B, kind string, objects int) string {
	b.Helper()
	api := f.managerAPI(b)
	b.Logf("S2 %s: API reads %d, writes %v (for example %v)", kind, api.Reads, api.Writes, api.Examples)
	return fmt.Sprintf("%s %.2f (%d writes refused)", kind, float64(api.Reads+total(api.Writes))/float64(objects), api.Refused)
}

// restart is a restarted manager's start-up and its first pass.
type restart struct {
	Synced         time.Duration  `json:"cachesSyncedNanos"`
	FirstReconcile time.Duration  `json:"firstReconcileNanos"`
	PassDone       time.Duration  `json:"passDoneNanos"`
	Vault          map[string]int `json:"vault"`
	Keycloak       map[string]int `json:"keycloak"`
	APIWrites      int            `json:"apiWrites"`
	APIReads       int            `json:"apiReads"`
	// API is the pass's API-server requests: the writes by verb and
	// resource, a few objects each.
	API apiRequests `json:"api"`
	// CPU is each process's CPU time per object over the restart (what
	// sets the pass's pace on two cores), Reconcile each controller's mean
	// reconcile time in the pass.
	CPU       map[string]time.Duration `json:"cpuPerObjectNanos"`
	Reconcile map[string]time.Duration `json:"reconcileMeanNanos"`
}

// restartMeasured restarts the manager with the fleet in step and
// measures, from the process start, when its object controllers' caches
// synced (they start their workers then), its first reconcile,
// and when it had reconciled every object once (a new leader does so at
// once: requeue/refresh.go), with the requests of that pass.
func (f *fleet) restartMeasured(b *testing.B, kinds scaleKinds) restart {
	b.Helper()
	f.waitServersCounted(b, kinds.Apps)
	f.stopManager()
	vBefore, kBefore := f.vaultCounts(), f.keycloakProxy.Counts()
	f.auditSince(b)
	cpuBefore := harness.CPUByCommand()
	start := time.Now()
	f.startManager(b, defaultWorkers)
	limit := max(scaleWindow, time.Duration(kinds.Apps+kinds.Creds)*20*time.Millisecond)
	st := restart{}
	var profiles sync.WaitGroup
	defer profiles.Wait()
	for st.PassDone == 0 {
		if st.Synced == 0 {
			log := f.manager.Log()
			if strings.Contains(log, `"Starting workers","controller":"vaultapp"`) && strings.Contains(log, `"Starting workers","controller":"keycloakclientcredential"`) {
				st.Synced = time.Since(start)
			}
		}
		if m, err := f.manager.Metrics(); err == nil {
			apps := reconciles(m, "vaultapp")
			creds := reconciles(m, "keycloakclientcredential")
			if st.FirstReconcile == 0 && apps+creds > 0 {
				st.FirstReconcile = time.Since(start)
				if out := os.Getenv("VKO_BENCH_PROFILE"); out != "" {
					// Where the pass's time goes, from its first reconcile.
					profiles.Go(func() { f.profile(out+".restart", profileWindow(kinds.Apps+kinds.Creds)/2) })
					profiles.Go(func() {
						f.profileAPIServer(b, out+".restart.kube-apiserver", profileWindow(kinds.Apps+kinds.Creds)/2)
					})
					profiles.Go(func() { f.profileVault(b, out+".restart.vault", profileWindow(kinds.Apps+kinds.Creds)/2) })
				}
			}
			if apps >= float64(kinds.Apps) && creds >= float64(kinds.Creds) {
				st.PassDone = time.Since(start)
			}
		}
		if time.Since(start) > limit {
			b.Fatalf("the restarted manager: caches synced after %s, first reconcile after %s, its first pass not done within %s (0: not yet)", st.Synced, st.FirstReconcile, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
	st.CPU = cpuPerObject(harness.Difference(harness.CPUByCommand(), cpuBefore), kinds.Apps+kinds.Creds)
	st.Reconcile = map[string]time.Duration{}
	if m, err := f.manager.Metrics(); err == nil {
		for _, c := range []string{"vaultapp", "keycloakclientcredential"} {
			st.Reconcile[c], _ = harness.HistogramMean(m, "controller_runtime_reconcile_time_seconds", map[string]string{"controller": c})
		}
	}
	st.Vault = harness.Difference(f.vaultCounts(), vBefore)
	st.Keycloak = harness.Difference(f.keycloakProxy.Counts(), kBefore)
	st.API = f.managerAPIFrom(b, start)
	st.APIReads, st.APIWrites = st.API.Reads, total(st.API.Writes)
	b.Logf("S3/S4 a restarted manager: caches synced %s, first reconcile %s, every object reconciled once %s: Vault %v, Keycloak %v, API writes %d %v (for example %v), reads %d; CPU per object by process %v, mean reconcile %v",
		st.Synced, st.FirstReconcile, st.PassDone, st.Vault, st.Keycloak, st.APIWrites, st.API.Writes, st.API.Examples, st.APIReads, st.CPU, st.Reconcile)
	return st
}

// waitServersCounted waits until the VaultServers' status counts the fleet's
// VaultApps: a count is written at most every 5 s
// (vault.DefaultCountInterval), so a manager stopped within 5 s of the last
// VaultApp's Ready leaves its last count for the next one to write.
func (f *fleet) waitServersCounted(b *testing.B, apps int) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var servers vaultv1beta1.VaultServerList
		if err := f.c.List(context.Background(), &servers); err != nil {
			b.Fatal(err)
		}
		counted := 0
		for _, s := range servers.Items {
			counted += int(s.Status.VaultApps)
		}
		if counted == apps {
			return
		}
		if time.Now().After(deadline) {
			b.Logf("the VaultServers count %d VaultApps after a minute, want %d: restarting anyway", counted, apps)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// shardsMemory runs the manager as count shards side by side (the single
// replica stopped first: its Lease handed back), waits until each has
// synced its caches and the machine is at rest again, and returns each
// one's peak RSS. Each holds its range of VaultApps and credentials, and
// shard 0 runs the cluster's jobs besides (docs/design.md).
func (f *fleet) shardsMemory(b *testing.B, count int, kinds scaleKinds) []int64 {
	b.Helper()
	f.stopManager()
	shards := make([]*harness.Manager, count)
	defer func() {
		for _, m := range shards {
			if m != nil {
				m.Stop()
			}
		}
	}()
	for i := range shards {
		f.managers++
		m, err := f.cluster.StartManager(context.Background(), fmt.Sprintf("manager-%02d-shard-%d", f.managers, i), nil,
			"--operator-namespace="+operatorNamespace,
			"--vault-service-account-token-path="+f.tokenPath,
			fmt.Sprintf("--shards=%d", count), fmt.Sprintf("--shard-index=%d", i), harness.WebhookPortFree)
		if err != nil {
			b.Fatal(err)
		}
		shards[i] = m
		f.all = append(f.all, m)
	}
	// Each shard's first pass: its VaultApps and credentials reconciled
	// once, its queues empty. How many are its own follows the API
	// server's hash, which splits the fleet's names unevenly (at 1,000
	// namespaces of 4 shards, one has none: docs/design.md, Sharding).
	limit := max(scaleWindow, time.Duration(kinds.Apps+kinds.Creds)*20*time.Millisecond)
	start := time.Now()
	owned := make([]scaleKinds, count)
	for obj := range shape.Size {
		i := shard.Of(nsName(obj), count)
		if kinds.Apps > 0 {
			owned[i].Apps++
		}
		if kinds.Creds > 0 {
			owned[i].Creds++
		}
	}
	b.Logf("S6 %d shards: the objects each owns %+v", count, owned)
	for i, m := range shards {
		for {
			// A shard that owns nothing counts no reconcile: its controllers'
			// workers started say its caches synced.
			log := m.Log()
			met, err := m.Metrics()
			if err == nil && strings.Contains(log, `"Starting workers","controller":"vaultapp"`) &&
				strings.Contains(log, `"Starting workers","controller":"keycloakclientcredential"`) && reconciles(met, "vaultapp") >= float64(owned[i].Apps) && reconciles(met, "keycloakclientcredential") >= float64(owned[i].Creds) &&
				harness.Gauge(met, "workqueue_depth", map[string]string{"name": "vaultapp"}) == 0 &&
				harness.Gauge(met, "workqueue_depth", map[string]string{"name": "keycloakclientcredential"}) == 0 {
				break
			}
			if time.Since(start) > limit {
				b.Fatalf("shard %d: its first pass (%+v) not done after %s; log:\n%s", i, owned[i], limit, m.LogTail(20))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	waitQuiet(b)
	rss := make([]int64, count)
	for i, m := range shards {
		var err error
		if rss[i], err = m.PeakRSS(); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("S6 %d shards: peak RSS %v bytes", count, rss)
	return rss
}
