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

package secrets

import (
	"context"
	"slices"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/watches"
)

// readersOfRotated queues, after a rotation, every other resource that
// reads the same client (in any namespace): each wrote the old secret,
// which Keycloak no longer accepts, and would otherwise wait for its own
// refresh. Each is reconciled as usual, under its own grant.
type readersOfRotated struct {
	ch chan event.TypedGenericEvent[reconcile.Request]
}

func newReadersOfRotated() *readersOfRotated {
	return &readersOfRotated{ch: make(chan event.TypedGenericEvent[reconcile.Request], 256)}
}

// source is what the controller watches.
func (q *readersOfRotated) source() source.TypedSource[reconcile.Request] {
	return source.TypedChannel(q.ch, handler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], w workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			w.Add(e.Object)
		},
	})
}

// queueReadersOf queues the other readers of kcc's client. The sends do
// not hold the pass that rotated: the channel drains into the queue.
func (r *KeycloakClientCredentialReconciler) queueReadersOf(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) {
	if r.readers == nil {
		return
	}
	src := kcc.Spec.Source
	reqs, err := r.readersOf(ctx, src.ServerRef.Name, src.Realm, src.ClientID)
	if err != nil {
		logf.FromContext(ctx).Error(err, "list the other readers of a rotated client", "client", src.ClientID)
		return
	}
	self := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(kcc)}
	reqs = slices.DeleteFunc(reqs, func(req reconcile.Request) bool { return req == self })
	if len(reqs) == 0 {
		return
	}
	go func() {
		for _, req := range reqs {
			r.readers.ch <- event.TypedGenericEvent[reconcile.Request]{Object: req}
		}
	}()
}

// readersOf are the credentials of this process's cache that read
// realm/clientID of server.
func (r *KeycloakClientCredentialReconciler) readersOf(ctx context.Context, server, realm, clientID string) ([]reconcile.Request, error) {
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list, client.MatchingFields{serverRefIndex: server}); err != nil {
		return nil, err
	}
	return watches.Requests(list.Items, func(k *secretsv1beta1.KeycloakClientCredential) bool {
		return k.Spec.Source.Realm == realm && k.Spec.Source.ClientID == clientID
	}), nil
}
