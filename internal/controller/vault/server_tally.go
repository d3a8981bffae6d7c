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
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// serverTally counts, from the cache's own events, the VaultApps that
// wrote to each VaultServer (status.server): a server's count is then a
// map read.
//
// Why: the count listed every cached VaultApp (a copy of each into the
// list) every DefaultCountInterval while VaultApps were being written.
// During a burst that is a cost proportional to the fleet, every five
// seconds, for as long as the burst lasts: quadratic in its size. Events
// arrive once per change.
//
// The tally sees what the manager's cache sees, as the listing did; a
// split cache (a shard's own namespaces) has no tally: its count pages
// through the API server (EveryVaultApp.Paged).
//
// A server whose count moved is queued from here (Source), once the
// tally holds the move: queued by a watch of its own, the server's
// reconcile could read the count before the tally's handler had run (the
// informer's handlers run each on its own), and keep it until the next
// check.
type serverTally struct {
	mu      sync.Mutex
	server  map[types.NamespacedName]string // a VaultApp → the server it wrote to
	count   map[string]int32                // a server → its VaultApps
	synced  func() bool                     // the cache's first listing is in; nil before Start
	cache   cache.Cache
	changed chan event.TypedGenericEvent[reconcile.Request]
	// stopped ends a queueing that waits when the tally stops.
	stopped <-chan struct{}
}

func newServerTally(c cache.Cache) *serverTally {
	return &serverTally{cache: c, server: map[types.NamespacedName]string{}, count: map[string]int32{},
		changed: make(chan event.TypedGenericEvent[reconcile.Request], 1024)}
}

// Source queues the servers whose count moved.
func (t *serverTally) Source() source.TypedSource[reconcile.Request] {
	return source.TypedChannel(t.changed, handler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(e.Object)
		},
	})
}

// Count is how many VaultApps wrote to server, and whether the tally
// holds the cache's whole first listing yet (false: ask the cache).
func (t *serverTally) Count(server string) (int32, bool) {
	if t == nil {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.synced == nil || !t.synced() {
		return 0, false
	}
	return t.count[server], true
}

// Start feeds the tally from the VaultApp informer until ctx ends. It runs
// on the leader only (NeedLeaderElection): a standby started the informer
// at setup would hold every VaultApp in memory, and have the API server
// send it every change, to count for nobody.
func (t *serverTally) Start(ctx context.Context) error {
	informer, err := t.cache.GetInformer(ctx, &vaultv1beta1.VaultApp{})
	if err != nil {
		return fmt.Errorf("VaultApp informer for the servers' counts: %w", err)
	}
	// Before the handler: its first listing may fill the queue.
	t.mu.Lock()
	t.stopped = ctx.Done()
	t.mu.Unlock()
	registration, err := informer.AddEventHandler(t.Handler())
	if err != nil {
		return fmt.Errorf("count the servers' VaultApps: %w", err)
	}
	t.mu.Lock()
	t.synced = registration.HasSynced
	t.mu.Unlock()
	<-ctx.Done()
	return informer.RemoveEventHandler(registration)
}

// NeedLeaderElection: see Start.
func (t *serverTally) NeedLeaderElection() bool { return true }

// set records that the VaultApp key wrote to server ("" for none, or
// gone), then queues the servers whose count moved. The queueing may wait
// for the controller to drain the channel; it holds no lock then.
func (t *serverTally) set(key types.NamespacedName, server string) {
	moved := t.move(key, server)
	t.mu.Lock()
	stopped := t.stopped
	t.mu.Unlock()
	for _, name := range moved {
		select {
		case t.changed <- event.TypedGenericEvent[reconcile.Request]{Object: reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}}:
		case <-stopped:
			return
		}
	}
}

// move updates the counts, and returns the servers whose count moved.
func (t *serverTally) move(key types.NamespacedName, server string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	before, had := t.server[key]
	if had && before == server {
		return nil
	}
	var moved []string
	if had {
		if t.count[before]--; t.count[before] <= 0 {
			delete(t.count, before)
		}
		delete(t.server, key)
		moved = append(moved, before)
	}
	if server != "" {
		t.server[key] = server
		t.count[server]++
		moved = append(moved, server)
	}
	return moved
}

// Handler is the tally's side of the VaultApp informer.
func (t *serverTally) Handler() toolscache.ResourceEventHandler {
	observe := func(obj any) {
		if app, ok := obj.(*vaultv1beta1.VaultApp); ok {
			t.set(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, app.Status.Server)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj) },
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				// The key, not the last state the informer kept.
				if ns, name, err := toolscache.SplitMetaNamespaceKey(gone.Key); err == nil {
					t.set(types.NamespacedName{Namespace: ns, Name: name}, "")
				}
				return
			}
			if app, ok := obj.(*vaultv1beta1.VaultApp); ok {
				t.set(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, "")
			}
		},
	}
}
