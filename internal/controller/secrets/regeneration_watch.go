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
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// realmsRead are the realms that credentials of the shard read and were
// granted (their Secret was written once: a credential naming a server or
// realm nobody granted its namespace makes the operator read nothing), once
// each, in order.
func realmsRead(creds []secretsv1beta1.KeycloakClientCredential, owns func(namespace string) bool) []realmRead {
	set := map[realmRead]bool{}
	for _, k := range creds {
		r := realmRead{Server: k.Spec.Source.ServerRef.Name, Realm: k.Spec.Source.Realm}
		if r.Server != "" && r.Realm != "" && k.Status.LastSyncTime != nil && !grantWithdrawn(&k.Status) && owns(k.Namespace) {
			set[r] = true
		}
	}
	out := slices.Collect(maps.Keys(set))
	slices.SortFunc(out, func(a, b realmRead) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Realm, b.Realm))
	})
	return out
}

// grantWithdrawn reports whether the credential's last pass found its
// source no longer granted (or its server gone): it reads the realm no
// more, and neither does the watch for it. An outage is no withdrawal:
// the realm stays watched, its cursor kept.
func grantWithdrawn(st *secretsv1beta1.KeycloakClientCredentialStatus) bool {
	c := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeSourceAvailable)
	return c != nil && c.Status == metav1.ConditionFalse && slices.Contains([]string{secretsv1beta1.ReasonServerNotFound,
		secretsv1beta1.ReasonServerNotAllowed, secretsv1beta1.ReasonAccessNotGranted, secretsv1beta1.ReasonNotAllowed}, c.Reason)
}

// realmWatch is what is kept of one realm's events between two reads: a
// cursor into Keycloak's own log, not shared state (a new process starts
// from the newest event, and reads every client at its first pass anyway).
type realmWatch struct {
	cursor keycloak.EventsCursor
	// skipUntil: after a failure, the realm is read again a minute later;
	// said holds the kind of refusal already logged.
	skipUntil time.Time
	said      string
}

// regenerationsRetry is how long a realm whose read failed waits.
const regenerationsRetry = time.Minute

// regenerationSource polls every RegenerationsEvery while the controller
// runs (on the leader of the shard: controllers start after the election).
func (r *KeycloakClientCredentialReconciler) regenerationSource() source.TypedSource[reconcile.Request] {
	return source.TypedFunc[reconcile.Request](func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			realms := map[realmRead]*realmWatch{}
			tick := time.NewTicker(r.RegenerationsEvery)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					r.readRegenerations(ctx, realms, q)
				}
			}
		}()
		return nil
	})
}

// readRegenerations reads each realm's new regenerations once, and wakes
// the readers of each client regenerated.
func (r *KeycloakClientCredentialReconciler) readRegenerations(ctx context.Context, realms map[realmRead]*realmWatch, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	log := logf.FromContext(ctx).WithName("regenerations")
	var list secretsv1beta1.KeycloakClientCredentialList
	// Read only: the cache's objects, not copies, every period.
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy, client.DisableReadYourWritesConsistency); err != nil {
		return
	}
	read := realmsRead(list.Items, r.Shard.Owns)
	for key := range realms {
		if !slices.Contains(read, key) {
			delete(realms, key) // no reader left: start afresh if one comes
		}
	}
	now := time.Now()
	for _, key := range read {
		w := realms[key]
		if w == nil {
			w = &realmWatch{}
			realms[key] = w
		}
		if now.Before(w.skipUntil) {
			continue
		}
		var ks secretsv1beta1.KeycloakServer
		if err := r.Get(ctx, client.ObjectKey{Name: key.Server}, &ks); err != nil {
			continue
		}
		kc, err := r.Clients.Client(ctx, &ks)
		if err != nil {
			continue // the credentials' own passes report it
		}
		got, err := kc.RegenerationsSince(ctx, key.Realm, w.cursor)
		if err != nil {
			// Refused or failing, the realm waits: no login or request
			// every period against a Keycloak that says no.
			w.skipUntil = now.Add(regenerationsRetry)
			if why := refusedRead(err); why != "" && w.said != why {
				w.said = why
				log.Info("the realm's admin events cannot be read: its readers learn of a secret regenerated elsewhere at their refresh",
					"server", key.Server, "realm", key.Realm, "why", why)
			}
			continue
		}
		w.cursor, w.said = got.Cursor, ""
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

// refusedRead says who must act on a refused read of the admin events; ""
// for another failure (Keycloak's outage is the credentials' to report).
func refusedRead(err error) string {
	switch {
	case keycloak.Forbidden(err):
		return "Keycloak refused (403): the Keycloak admin grants the operator's client view-events of the realm"
	case keycloak.Unsupported(err):
		return "Keycloak does not answer the query (400): it needs Keycloak 26.2 or later"
	}
	return ""
}
