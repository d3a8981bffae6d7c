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
	"regexp"
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

// Two and four shards of one cluster on the real API server, with its
// sharded list and watch (KEP-5866) and without: each namespace's VaultApps are
// written by the one replica whose range holds it (the audit log says who
// wrote: each replica's user agent names its shard), the cluster's jobs
// run on shard 0 alone, and where the API server filters, every shard
// asks for its range alone. Either way, a shard's standby takes over its
// range when the leader is killed mid-burst, and shard 0's orphan sweep
// covers every range.
func TestShardsSplitTheNamespaces(t *testing.T) {
	for _, tc := range []struct {
		serverSide bool
		shards     int
	}{{true, 4}, {true, 2}, {false, 4}, {false, 2}} {
		t.Run(fmt.Sprintf("ShardedListAndWatch=%t,shards=%d", tc.serverSide, tc.shards), func(t *testing.T) { testShards(t, tc.serverSide, tc.shards) })
	}
}

const shardApps = 3

func testShards(t *testing.T, serverSide bool, shards int) {
	ctx := context.Background()
	w, start := newShardedWorld(t, serverSide, shards)
	c := w.c
	var managers []*harness.Manager
	var agents []string
	for i := range shards {
		managers = append(managers, start(fmt.Sprintf("shard-%d", i), i))
		agents = append(agents, shardAgent(i, shards))
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
		// Where the API server filters, every shard's informer watches its
		// range alone, shard 0's too: its cluster-wide jobs (a server's
		// count, its cleanup, the orphan sweep) list the API server.
		if e.ObjectRef.Resource == "vaultapps" && e.User.Username == harness.ManagerUser {
			if strings.Contains(e.RequestURI, "shardSelector=") {
				shardedWatches[e.UserAgent]++
			} else if serverSide {
				t.Errorf("%s watches every VaultApp: %s", e.UserAgent, e.RequestURI)
			}
		}
	}
	for i, agent := range agents {
		if want := serverSide; (shardedWatches[agent] > 0) != want {
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
	failover(t, w, start, managers[1], createApps, namespaces, owners, agents, offset)
	sweepAcrossShards(t, w, start, managers, namespaces, owners)
}

// newShardedWorld is a world (its API server with ShardedListAndWatch
// when serverSide) whose webhooks every started manager serves, and start,
// which runs a replica of shard index of shards, stopped at the end.
func newShardedWorld(t *testing.T, serverSide bool, shards int) (*world, func(name string, index int) *harness.Manager) {
	t.Helper()
	opts := harness.ClusterOptions{}
	if serverSide {
		opts.FeatureGates = "ShardedListAndWatch=true"
	}
	w := newWorldOf(t, harness.StartVault, opts)
	wh := w.cluster.Env.WebhookInstallOptions
	svc, err := harness.StartService(fmt.Sprintf("%s:%d", wh.LocalServingHost, wh.LocalServingPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return w, func(name string, index int) *harness.Manager {
		m := w.startManager(t, name, w.vault.Addr, fmt.Sprintf("--shards=%d", shards), fmt.Sprintf("--shard-index=%d", index), harness.WebhookPortFree)
		svc.Add(strings.TrimPrefix(m.WebhookURL, "https://"))
		t.Cleanup(m.Stop)
		return m
	}
}

// shardAgent is the user agent of shard index of shards in the audit log.
func shardAgent(index, shards int) string {
	return fmt.Sprintf("vault-keycloak-operator (shard %d/%d)", index, shards)
}

// sweepAcrossShards: shard 0's orphan sweep (run at start) sees every
// VaultApp, from the API server where its cache holds its range alone
// (the sharded watch), from its cache where that holds them all. A
// VaultApp deleted behind the operators' back (of another range with four
// shards, of shard 0's own with two) loses its policy; the live policies of
// every range are kept without a Vault read.
func sweepAcrossShards(t *testing.T, w *world, start func(string, int) *harness.Manager, managers []*harness.Manager,
	namespaces []string, owners map[string]int) {
	t.Helper()
	ctx := context.Background()
	// Not shard 1's: its standby leads it now, which stopping managers[1]
	// would not stop. Of shard 2 or 3 where there are four (the sweep then
	// removes another range's orphan), else of shard 0's own range.
	i := slices.IndexFunc(namespaces, func(ns string) bool { return owners[ns] > 1 })
	if i < 0 {
		i = slices.IndexFunc(namespaces, func(ns string) bool { return owners[ns] == 0 })
	}
	if i < 0 {
		t.Fatalf("no namespace of shard 0 or shards 2 and up among %v", namespaces)
	}
	ns := namespaces[i]
	managers[0].Stop()
	if owners[ns] != 0 {
		managers[owners[ns]].Stop()
	}
	orphan := &vaultv1beta1.VaultApp{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: appName(0)}, orphan); err != nil {
		t.Fatal(err)
	}
	orphan.Finalizers = nil
	if err := w.c.Update(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	if err := w.c.Delete(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	vc, err := w.vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	orphanPolicy := "app." + ns + "." + appName(0)
	if text, err := vc.Sys().GetPolicyWithContext(ctx, orphanPolicy); err != nil || text == "" {
		t.Fatalf("policy %s before the sweep: %q, %v; want it there", orphanPolicy, text, err)
	}

	shard0 := start("shard-0-again", 0)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(shard0.Log(), "removed orphaned Vault policies and roles") {
		if time.Now().After(deadline) {
			t.Fatalf("shard 0's sweep removed nothing in a minute; its log ends:\n%s", lastLines(shard0.Log(), 15))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if text, err := vc.Sys().GetPolicyWithContext(ctx, orphanPolicy); err != nil || text != "" {
		t.Errorf("shard 0's sweep left the orphaned policy %s of shard %d's range (%v)", orphanPolicy, owners[ns], err)
	}
	var live vaultv1beta1.VaultAppList
	if err := w.c.List(ctx, &live); err != nil {
		t.Fatal(err)
	}
	for _, app := range live.Items {
		if text, err := vc.Sys().GetPolicyWithContext(ctx, "app."+app.Namespace+"."+app.Name); err != nil || text == "" {
			t.Errorf("policy of live VaultApp %s/%s after the sweep: %q, %v; want it kept", app.Namespace, app.Name, text, err)
		}
	}
	// The other ranges' live policies are known from the VaultApps listed:
	// the sweep reads the orphan alone.
	read := regexp.MustCompile(`"removed orphaned Vault policies and roles".*"policiesRead":(\d+)`).FindStringSubmatch(shard0.Log())
	switch {
	case read == nil:
		t.Errorf("shard 0's sweep does not say how many policies it read; its log ends:\n%s", lastLines(shard0.Log(), 15))
	case read[1] != "1":
		t.Errorf("shard 0's sweep read %s candidate policies, want the orphan alone (1): it read live policies of other ranges", read[1])
	}
}

// failover kills shard 1's leader mid-burst with its standby running: the
// standby takes its range over, and the burst's VaultApps in its namespaces,
// those the leader left half done and those created since, get Ready,
// written by shard 1 alone.
func failover(t *testing.T, w *world, start func(string, int) *harness.Manager, leader *harness.Manager, createApps func(...string),
	namespaces []string, owners map[string]int, agents []string, offset int64) {
	t.Helper()
	start("shard-1-standby", 1)
	createApps(appName(3))
	leader.Kill()
	createApps(appName(4))
	waitAllIn(t, w, namespaces, len(namespaces)*(shardApps+2), time.Minute)
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

// From one replica to two shards, then from two to three: while the
// leaders of the old count run, those of the new one hold their reconciles
// (the old alone write); once the old stop, the new take over within
// seconds, each its range.
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
	// Of shards 0, 1 of 2 and 0, 1, 2 of 3 (the hash is fixed).
	namespaces := []string{"orders", "payments", "auth", "marketing"}
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
	// writersSince checks who wrote the VaultApps since offset: by
	// namespace, the replica of count shards whose range holds it.
	writersSince := func(offset int64, shards int, when string) int64 {
		t.Helper()
		events, next, err := w.cluster.AuditEvents(offset)
		if err != nil {
			t.Fatal(err)
		}
		for ns, by := range writersByNamespace(events) {
			want := "vault-keycloak-operator (shard all)"
			for i := range shards {
				if s := (shard.Shard{Index: i, Count: shards}); shards > 1 && s.Owns(ns) {
					want = "vault-keycloak-operator (shard " + s.String() + ")"
				}
			}
			if len(by) != 1 || !by[want] {
				t.Errorf("%s, VaultApps of %s written by %v, want by %q alone", when, ns, keys(by), want)
			}
		}
		return next
	}
	var running []*harness.Manager
	startCount := func(shards int) {
		running = running[:0]
		if shards == 1 {
			running = append(running, start("unsharded"))
			return
		}
		for i := range shards {
			running = append(running, start(fmt.Sprintf("shard-%d-of-%d", i, shards), fmt.Sprintf("--shards=%d", shards), fmt.Sprintf("--shard-index=%d", i)))
		}
	}
	startCount(1)
	createApps()
	waitAllIn(t, w, namespaces, len(namespaces)*created, time.Minute)
	_, offset, err := w.cluster.AuditEvents(0)
	if err != nil {
		t.Fatal(err)
	}

	for _, step := range []struct{ from, to int }{{1, 2}, {2, 3}} {
		// The new count's replicas start beside the old leaders: they go on alone.
		old := slices.Clone(running)
		startCount(step.to)
		for range 3 {
			createApps()
			waitAllIn(t, w, namespaces, len(namespaces)*created, time.Minute)
		}
		offset = writersSince(offset, step.from, fmt.Sprintf("with the leaders of %d running beside %d", step.from, step.to))

		// They stop (a rollout ends): the new count takes over, each its range.
		for _, m := range old {
			m.Stop()
		}
		stopped := time.Now()
		createApps()
		waitAllIn(t, w, namespaces, len(namespaces)*created, time.Minute)
		if took := time.Since(stopped); took > 20*time.Second {
			t.Errorf("%d shards took %s over from the %d stopped, want within the failover bound (20 s)", step.to, took.Round(time.Second), step.from)
		}
		offset = writersSince(offset, step.to, fmt.Sprintf("after the leaders of %d stopped", step.from))
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

func lastLines(text string, n int) string {
	lines := strings.Split(text, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func firstLines(text string, n int) string {
	lines := strings.SplitN(text, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
