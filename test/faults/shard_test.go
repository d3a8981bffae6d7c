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

package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Four shards of one cluster on the real API server with its sharded list
// and watch (KEP-5866), two without: each namespace's VaultApps are
// written by the one replica whose range holds it (the audit log says who
// wrote: each replica's user agent names its shard), the cluster's jobs
// run on shard 0 alone, and where the API server filters, the other shards
// ask for their range alone. With the feature, a shard's standby takes over
// its range when the leader is killed.
func TestShardsSplitTheNamespaces(t *testing.T) {
	for _, tc := range []struct {
		serverSide bool
		shards     int
	}{{true, 4}, {false, 2}} {
		t.Run(fmt.Sprintf("ShardedListAndWatch=%t,shards=%d", tc.serverSide, tc.shards), func(t *testing.T) { testShards(t, tc.serverSide, tc.shards) })
	}
}

const shardApps = 3

func testShards(t *testing.T, serverSide bool, shards int) {
	ctx := context.Background()
	opts := harness.ClusterOptions{}
	if serverSide {
		opts.FeatureGates = "ShardedListAndWatch=true"
	}
	w := newWorldOf(t, harness.StartVault, opts)
	c := w.c
	wh := w.cluster.Env.WebhookInstallOptions
	svc, err := harness.StartService(fmt.Sprintf("%s:%d", wh.LocalServingHost, wh.LocalServingPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	start := func(name string, index int) *harness.Manager {
		m := w.startManager(t, name, w.vault.Addr, fmt.Sprintf("--shards=%d", shards), fmt.Sprintf("--shard-index=%d", index), harness.WebhookPortFree)
		svc.Add(strings.TrimPrefix(m.WebhookURL, "https://"))
		t.Cleanup(m.Stop)
		return m
	}
	var managers []*harness.Manager
	var agents []string
	for i := range shards {
		managers = append(managers, start(fmt.Sprintf("shard-%d", i), i))
		agents = append(agents, fmt.Sprintf("vault-keycloak-operator (shard %d/%d)", i, shards))
	}

	// Namespaces of every range (the hash is fixed: this holds or never).
	// Names that differ in their last character alone mostly fall in one
	// range (FNV-1a's high bits): shop-0…shop-7 are all shard 1's of 2.
	namespaces := []string{"orders", "checkout", "reports", "inventory", "payments", "catalog", "identity", "frontend", "analytics", "billing"}
	owners, owned := map[string]int{}, make([]int, shards)
	for _, ns := range namespaces {
		for i := range shards {
			if (shard.Shard{Index: i, Count: shards}).Owns(ns) {
				owners[ns] = i
				owned[i]++
			}
		}
	}
	if slices.Contains(owned, 0) {
		t.Fatalf("namespaces per shard %v: pick names of every range", owned)
	}
	createApps := func(names ...string) {
		for _, ns := range namespaces {
			for _, name := range names {
				app := vaultApp(name, "db/*")
				app.Namespace = ns
				if err := c.Create(ctx, app); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, ns := range namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	createApps(appName(0), appName(1), appName(2))
	waitAllIn(t, w, namespaces, len(namespaces)*shardApps, time.Minute)

	events, offset, err := w.cluster.AuditEvents(0)
	if err != nil {
		t.Fatal(err)
	}
	writers := writersByNamespace(events)
	for _, ns := range namespaces {
		if want := agents[owners[ns]]; len(writers[ns]) != 1 || !writers[ns][want] {
			t.Errorf("VaultApps of %s written by %v, want by %q alone", ns, keys(writers[ns]), want)
		}
	}
	crdReads, shardedWatches := map[string]int{}, map[string]int{}
	for _, e := range events {
		if e.ObjectRef.Resource == "customresourcedefinitions" && e.User.Username == harness.ManagerUser {
			crdReads[e.UserAgent]++
		}
	}
	watches, _, err := w.cluster.AuditWatchesStarted(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range watches {
		// Where the API server filters, the informers of shards other
		// than 0 watch their range alone; shard 0 keeps every VaultApp for
		// the cluster's jobs (a server's count, its cleanup).
		if e.ObjectRef.Resource == "vaultapps" && e.User.Username == harness.ManagerUser {
			if strings.Contains(e.RequestURI, "shardSelector=") {
				shardedWatches[e.UserAgent]++
			} else if serverSide && e.UserAgent != agents[0] {
				t.Errorf("%s watches every VaultApp: %s", e.UserAgent, e.RequestURI)
			}
		}
	}
	for i, agent := range agents {
		if want := serverSide && i > 0; (shardedWatches[agent] > 0) != want {
			t.Errorf("shard %d: %d watches of VaultApps with a shardSelector, want some: %t", i, shardedWatches[agent], want)
		}
	}
	if !serverSide && len(shardedWatches) != 0 {
		t.Errorf("watches with a shardSelector on an API server that does not serve them: %v", shardedWatches)
	}
	// And the API server does filter custom resources by it.
	if serverSide {
		var ranged vaultv1beta1.VaultAppList
		s1 := shard.Shard{Index: 1, Count: shards}
		if err := c.List(ctx, &ranged, &client.ListOptions{Raw: &metav1.ListOptions{ShardSelector: s1.Selector()}}); err != nil {
			t.Fatal(err)
		}
		for _, app := range ranged.Items {
			if !s1.Owns(app.Namespace) {
				t.Errorf("the API server sent %s/%s for shard 1's selector", app.Namespace, app.Name)
			}
		}
		if len(ranged.Items) != owned[1]*shardApps {
			t.Errorf("shard 1's selector listed %d VaultApps, want its %d", len(ranged.Items), owned[1]*shardApps)
		}
	}
	// The storage migration, a job done once per cluster, reads the CRDs.
	for i, agent := range agents {
		if (crdReads[agent] == 0) == (i == 0) {
			t.Errorf("CRDs read by shard %d %d times; want the cluster's jobs on shard 0 alone", i, crdReads[agent])
		}
	}
	for i, m := range managers {
		want := "sharded: the API server sends this replica its namespaces alone"
		if !serverSide {
			want = "this replica caches every namespace"
		}
		if !strings.Contains(m.Log(), want) {
			t.Errorf("shard %d does not say %q at start; its log begins:\n%s", i, want, firstLines(m.Log(), 15))
		}
	}
	if !serverSide {
		return
	}
	failover(t, w, start, managers[1], createApps, namespaces, owners, agents, offset)
}

// failover kills shard 1's leader with its standby running: the standby
// takes its range over, and the VaultApps created since in its namespaces
// get Ready, written by shard 1 alone.
func failover(t *testing.T, w *world, start func(string, int) *harness.Manager, leader *harness.Manager, createApps func(...string),
	namespaces []string, owners map[string]int, agents []string, offset int64) {
	t.Helper()
	// Shard 1's leader killed: its standby takes its range over, and the
	// VaultApps created since in its namespaces get Ready.
	start("shard-1-standby", 1)
	leader.Kill()
	createApps(appName(3))
	waitAllIn(t, w, namespaces, len(namespaces)*(shardApps+1), time.Minute)
	events, _, err := w.cluster.AuditEvents(offset)
	if err != nil {
		t.Fatal(err)
	}
	for ns, by := range writersByNamespace(events) {
		if want := agents[owners[ns]]; len(by) != 1 || !by[want] {
			t.Errorf("after the failover, VaultApps of %s written by %v, want by %q alone", ns, keys(by), want)
		}
	}
}

// From one replica to two shards: while the unsharded leader runs, the
// shards' leaders hold their reconciles (it alone writes); once it stops,
// they take over within seconds, each its range.
func TestShardCountChangedUnderLoad(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	c := w.c
	wh := w.cluster.Env.WebhookInstallOptions
	svc, err := harness.StartService(fmt.Sprintf("%s:%d", wh.LocalServingHost, wh.LocalServingPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	start := func(name string, extra ...string) *harness.Manager {
		m := w.startManager(t, name, w.vault.Addr, append(extra, harness.WebhookPortFree)...)
		svc.Add(strings.TrimPrefix(m.WebhookURL, "https://"))
		t.Cleanup(m.Stop)
		return m
	}
	namespaces := []string{"orders", "payments"} // shard 0's, shard 1's
	for _, ns := range namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	created := 0
	createApps := func() {
		for _, ns := range namespaces {
			app := vaultApp(appName(created), "db/*")
			app.Namespace = ns
			if err := c.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
		}
		created++
	}
	whole := start("unsharded")
	createApps()
	waitAllIn(t, w, namespaces, 2*created, time.Minute)
	_, offset, err := w.cluster.AuditEvents(0)
	if err != nil {
		t.Fatal(err)
	}

	// The new count's replicas start beside the old leader: it goes on alone.
	start("shard-0", "--shards=2", "--shard-index=0")
	start("shard-1", "--shards=2", "--shard-index=1")
	for range 3 {
		createApps()
		waitAllIn(t, w, namespaces, 2*created, time.Minute)
	}
	events, offset, err := w.cluster.AuditEvents(offset)
	if err != nil {
		t.Fatal(err)
	}
	for ns, by := range writersByNamespace(events) {
		if len(by) != 1 || !by["vault-keycloak-operator (shard all)"] {
			t.Errorf("with the unsharded leader running, VaultApps of %s written by %v, want by it alone", ns, keys(by))
		}
	}

	// It stops (a rollout ends): the shards take over, each its range.
	whole.Stop()
	stopped := time.Now()
	createApps()
	waitAllIn(t, w, namespaces, 2*created, time.Minute)
	if took := time.Since(stopped); took > 20*time.Second {
		t.Errorf("the shards took %s over from the stopped leader, want within the failover bound (20 s)", took.Round(time.Second))
	}
	events, _, err = w.cluster.AuditEvents(offset)
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]string{"orders": "vault-keycloak-operator (shard 0/2)", "payments": "vault-keycloak-operator (shard 1/2)"}
	for ns, by := range writersByNamespace(events) {
		if len(by) != 1 || !by[agents[ns]] {
			t.Errorf("after the unsharded leader stopped, VaultApps of %s written by %v, want by %q alone", ns, keys(by), agents[ns])
		}
	}
}

// writersByNamespace are the user agents that wrote VaultApps (their
// status, their finalizer), by namespace.
func writersByNamespace(events []harness.AuditEvent) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, e := range events {
		if e.ObjectRef.Resource != "vaultapps" || !e.Write() || e.User.Username != harness.ManagerUser {
			continue
		}
		if out[e.ObjectRef.Namespace] == nil {
			out[e.ObjectRef.Namespace] = map[string]bool{}
		}
		out[e.ObjectRef.Namespace][e.UserAgent] = true
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// waitAllIn waits until n VaultApps of namespaces are Ready for their
// current spec.
func waitAllIn(t *testing.T, w *world, namespaces []string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var list vaultv1beta1.VaultAppList
		if err := w.c.List(context.Background(), &list); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, app := range list.Items {
			if slices.Contains(namespaces, app.Namespace) && harness.ReadyFor(app.Status.Conditions, app.Generation) {
				ready++
			}
		}
		if ready == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d VaultApps Ready after %s", ready, n, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func firstLines(text string, n int) string {
	lines := strings.SplitN(text, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
