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

package vault

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

func tallied(ns, name, server string) *vaultv1beta1.VaultApp {
	return &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status: vaultv1beta1.VaultAppStatus{Server: server}}
}

// TestServerTallyFollowsTheCache: each event the informer delivers moves
// the counts as a fresh listing of the cache would count them.
func TestServerTallyFollowsTheCache(t *testing.T) {
	type step func(h toolscache.ResourceEventHandler)
	add := func(a *vaultv1beta1.VaultApp) step {
		return func(h toolscache.ResourceEventHandler) { h.OnAdd(a, false) }
	}
	update := func(a, b *vaultv1beta1.VaultApp) step {
		return func(h toolscache.ResourceEventHandler) { h.OnUpdate(a, b) }
	}
	del := func(obj any) step { return func(h toolscache.ResourceEventHandler) { h.OnDelete(obj) } }
	tests := []struct {
		name  string
		steps []step
		want  map[string]int32
		// queued is how many times a server was queued: once per count
		// that moved.
		queued int
	}{
		{"a new VaultApp has written nowhere yet", []step{add(tallied("a", "x", ""))}, map[string]int32{}, 0},
		{"its first write counts once, its later passes not again", []step{
			add(tallied("a", "x", "")),
			update(tallied("a", "x", ""), tallied("a", "x", "vault-a")),
			update(tallied("a", "x", "vault-a"), tallied("a", "x", "vault-a")),
		}, map[string]int32{"vault-a": 1}, 1},
		{"same name in two namespaces: two VaultApps", []step{
			add(tallied("a", "x", "vault-a")), add(tallied("b", "x", "vault-a")),
		}, map[string]int32{"vault-a": 2}, 2},
		{"moved to another server", []step{
			add(tallied("a", "x", "vault-a")), add(tallied("a", "y", "vault-a")),
			update(tallied("a", "x", "vault-a"), tallied("a", "x", "vault-b")),
		}, map[string]int32{"vault-a": 1, "vault-b": 1}, 4},
		{"deleted: its server's last one leaves no entry", []step{
			add(tallied("a", "x", "vault-a")), del(tallied("a", "x", "vault-a")),
		}, map[string]int32{}, 2},
		{"deleted while the watch was down (a tombstone)", []step{
			add(tallied("a", "x", "vault-a")), add(tallied("a", "y", "vault-a")),
			del(toolscache.DeletedFinalStateUnknown{Key: "a/x", Obj: tallied("a", "x", "vault-a")}),
		}, map[string]int32{"vault-a": 1}, 3},
		{"a tombstone is told by its key, whatever state it kept", []step{
			add(tallied("a", "x", "vault-a")), add(tallied("a", "y", "vault-a")),
			del(toolscache.DeletedFinalStateUnknown{Key: "a/x", Obj: "not a VaultApp"}),
		}, map[string]int32{"vault-a": 1}, 3},
		{"a relist's adds of what the tally holds change nothing", []step{
			add(tallied("a", "x", "vault-a")), add(tallied("a", "x", "vault-a")),
		}, map[string]int32{"vault-a": 1}, 1},
		{"a delete of a VaultApp never seen changes nothing", []step{
			add(tallied("a", "x", "vault-a")), del(tallied("a", "z", "vault-a")),
		}, map[string]int32{"vault-a": 1}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tally := newServerTally(nil)
			for _, s := range tc.steps {
				s(tally.Handler())
			}
			if !maps.Equal(tally.count, tc.want) {
				t.Errorf("counts %v, want %v", tally.count, tc.want)
			}
			if got := len(tally.changed); got != tc.queued {
				t.Errorf("servers queued %d times, want %d (once per count that moved)", got, tc.queued)
			}
		})
	}
}

// TestServerTallyAnswersOnceSynced: before the cache's first listing is
// in (or without a tally: a split cache), the count is asked of the cache.
func TestServerTallyAnswersOnceSynced(t *testing.T) {
	var none *serverTally
	if _, ok := none.Count("vault-a"); ok {
		t.Error("no tally answered")
	}
	tally := newServerTally(nil)
	tally.Handler().OnAdd(tallied("a", "x", "vault-a"), true)
	synced := false
	tally.synced = func() bool { return synced }
	if _, ok := tally.Count("vault-a"); ok {
		t.Error("a tally answered before its informer synced")
	}
	synced = true
	if n, ok := tally.Count("vault-a"); !ok || n != 1 {
		t.Errorf("Count = %d, %v; want 1, true", n, ok)
	}
	if n, ok := tally.Count("vault-b"); !ok || n != 0 {
		t.Errorf("Count of a server nobody wrote to = %d, %v; want 0, true", n, ok)
	}
}

// TestServerTallyQueuesAServerOnceItHoldsTheMove: the server's reconcile,
// queued by the tally, reads the count the queueing change made.
func TestServerTallyQueuesAServerOnceItHoldsTheMove(t *testing.T) {
	tally := newServerTally(nil)
	// Unbuffered: each queueing waits here, where the count is read.
	tally.changed = make(chan event.TypedGenericEvent[reconcile.Request])
	tally.synced = func() bool { return true }
	h := tally.Handler()
	h.OnAdd(tallied("a", "x", ""), false) // wrote nowhere: queues nothing, so does not wait
	countWhenQueued := func(change func()) map[string]int32 {
		t.Helper()
		done := make(chan struct{})
		go func() { change(); close(done) }()
		counts := map[string]int32{}
		for {
			select {
			case e := <-tally.changed:
				counts[e.Object.Name], _ = tally.Count(e.Object.Name)
			case <-done:
				return counts
			}
		}
	}
	if got := countWhenQueued(func() { h.OnUpdate(tallied("a", "x", ""), tallied("a", "x", "vault-a")) }); !maps.Equal(got, map[string]int32{"vault-a": 1}) {
		t.Fatalf("counts read as each server was queued: %v, want vault-a's 1", got)
	}
	if got := countWhenQueued(func() { h.OnUpdate(tallied("a", "x", "vault-a"), tallied("a", "x", "vault-b")) }); !maps.Equal(got, map[string]int32{"vault-a": 0, "vault-b": 1}) {
		t.Fatalf("a move from vault-a to vault-b: counts read as each was queued %v, want vault-a's 0 and vault-b's 1", got)
	}
	if got := countWhenQueued(func() { h.OnUpdate(tallied("a", "x", "vault-b"), tallied("a", "x", "vault-b")) }); len(got) != 0 {
		t.Fatalf("a pass that moved nothing queued %v", got)
	}
}
