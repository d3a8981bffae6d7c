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
	"cmp"
	"context"
	"slices"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// Regenerations made outside this process: another cluster's operator
// rotating a client this cluster reads too, or an admin in the console.
// Every RegenerationsEvery, one read per realm that this process's
// credentials read asks Keycloak's admin events for client secrets issued
// since the last read; the readers of each are woken as after a rotation
// of this process. Where the realm's admin events are off, or the
// operator lacks view-events, the readers learn at their refresh, as
// before.

// realmRead is a realm of a KeycloakServer that credentials read.
type realmRead struct{ Server, Realm string }

// realmsRead are the realms the credentials read, once each, in order.
func realmsRead(creds []secretsv1beta1.KeycloakClientCredential) []realmRead {
	var out []realmRead
	for _, k := range creds {
		r := realmRead{Server: k.Spec.Source.ServerRef.Name, Realm: k.Spec.Source.Realm}
		if r.Server != "" && r.Realm != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b realmRead) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Realm, b.Realm))
	})
	return out
}

// regenerationSource polls every RegenerationsEvery while the controller
// runs. The cursors are where each realm's events were read up to, on
// Keycloak's clock: a cursor into Keycloak's log, not shared state (a new
// process starts from the newest event, as it reads every client at its
// first pass anyway).
func (r *KeycloakClientCredentialReconciler) regenerationSource() source.TypedSource[reconcile.Request] {
	return source.TypedFunc[reconcile.Request](func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			cursors := map[realmRead]time.Time{}
			refused := map[realmRead]bool{}
			tick := time.NewTicker(r.RegenerationsEvery)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					r.readRegenerations(ctx, cursors, refused, q)
				}
			}
		}()
		return nil
	})
}

// readRegenerations reads each realm's new regenerations once, and wakes
// the readers of each client regenerated.
func (r *KeycloakClientCredentialReconciler) readRegenerations(ctx context.Context, cursors map[realmRead]time.Time, refused map[realmRead]bool,
	q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	log := logf.FromContext(ctx).WithName("regenerations")
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list); err != nil {
		return
	}
	read := realmsRead(list.Items)
	for key := range cursors {
		if !slices.Contains(read, key) {
			delete(cursors, key) // no reader left: start afresh if one comes
		}
	}
	for _, key := range read {
		var ks secretsv1beta1.KeycloakServer
		if err := r.Get(ctx, client.ObjectKey{Name: key.Server}, &ks); err != nil {
			continue
		}
		kc, err := r.Clients.Client(ctx, &ks)
		if err != nil {
			continue // the credentials' own passes report it
		}
		got, err := kc.RegenerationsSince(ctx, key.Realm, cursors[key])
		switch {
		case keycloak.Forbidden(err):
			if !refused[key] {
				refused[key] = true
				log.Info("Keycloak refused to show the realm's admin events: its readers learn of a secret regenerated elsewhere at their refresh; the Keycloak admin grants the operator's client view-events of the realm",
					"server", key.Server, "realm", key.Realm)
			}
			continue
		case err != nil:
			continue // Keycloak's outage is reported by the credentials
		}
		refused[key] = false
		cursors[key] = got.Cursor
		if len(got.ClientIDs) == 0 {
			continue
		}
		var clients []rotated
		for _, id := range slices.Compact(slices.Sorted(slices.Values(got.ClientIDs))) {
			clients = append(clients, rotated{Realm: key.Realm, ClientID: id})
		}
		log.V(1).Info("secrets regenerated outside this process", "server", key.Server, "realm", key.Realm, "clients", len(clients))
		r.wakeReaders(ctx, key.Server, clients, q)
	}
}
