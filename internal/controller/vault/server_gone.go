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

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A deleted VaultServer's client (its token, its connections) is dropped
// on every replica. The VaultServer controller forgets it too, but with
// --shards it runs on shard 0 alone, while every shard's VaultApps build
// clients: the others would keep a deleted server's until they stop.

// forgetter drops what is kept for a server by its name.
type forgetter interface{ Forget(name string) }

// Forget drops the client of a VaultServer that is gone.
func (v *ClusterDestinations) Forget(name string) {
	if v.Clients != nil {
		v.Clients.Forget(name)
	}
}

// forgetOnDelete is an event handler that, before its own handling of a
// deletion, forgets the deleted object's name. A VaultServer with the
// cleanup finalizer is deleted for good only once its cleanup, which uses
// the client, is done.
type forgetOnDelete struct {
	handler.EventHandler
	forget func(name string)
}

func (h forgetOnDelete) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if e.Object != nil {
		h.forget(e.Object.GetName())
	}
	h.EventHandler.Delete(ctx, e, q)
}
