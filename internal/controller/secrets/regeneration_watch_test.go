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
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Each realm once, and only of credentials the shard owns that were granted
// once (a credential naming a server or realm nobody granted makes the
// operator read nothing).
func TestRealmsReadAreEachGrantedRealmOnce(t *testing.T) {
	in := func(server, realm string, synced bool) secretsv1beta1.KeycloakClientCredential {
		k := teamA("x", "c")
		k.Spec.Source.ServerRef.Name, k.Spec.Source.Realm = server, realm
		if synced {
			k.Status.LastSyncTime = &metav1.Time{Time: time.Now()}
		}
		return *k
	}
	other := in("kc", "elsewhere", true)
	other.Namespace = "another-shard"
	withdrawn := in("kc", "withdrawn", true) // synced once, then the grant went
	withdrawn.Status.Conditions = []metav1.Condition{{Type: secretsv1beta1.TypeSourceAvailable, Status: metav1.ConditionFalse, Reason: secretsv1beta1.ReasonAccessNotGranted}}
	down := in("kc", "c", true) // Keycloak did not answer: still watched
	down.Status.Conditions = []metav1.Condition{{Type: secretsv1beta1.TypeSourceAvailable, Status: metav1.ConditionFalse, Reason: secretsv1beta1.ReasonKeycloakUnavailable}}
	got := realmsRead([]secretsv1beta1.KeycloakClientCredential{in("kc", "b", true), in("kc", "a", true), in("kc", "b", true), in("other", "a", true),
		in("", "a", true), in("kc", "never-granted", false), other, withdrawn, down}, func(ns string) bool { return ns != "another-shard" })
	want := []realmRead{{"kc", "a"}, {"kc", "b"}, {"kc", "c"}, {"other", "a"}}
	if !slices.Equal(got, want) {
		t.Fatalf("realmsRead = %v, want %v", got, want)
	}
}

// A secret regenerated outside the process (another cluster, an admin)
// wakes its readers at the next read of the realm's admin events, and the
// repair that follows writes the new secret, not the one remembered. A
// realm whose events the operator may not read wakes nobody.
func TestASecretRegeneratedElsewhereWakesItsReaders(t *testing.T) {
	ctx := context.Background()
	w := newKCCWorld(t, teamA("web", "team-a-web"), teamA("rot", "team-a-rot"))
	w.reconcile("web")
	w.reconcile("rot")
	realms := map[realmRead]*realmWatch{}
	read := func() []reconcile.Request {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		w.r.readRegenerations(ctx, realms, q)
		var out []reconcile.Request
		for q.Len() > 0 {
			item, _ := q.Get()
			out = append(out, item)
		}
		return out
	}
	if got := read(); len(got) != 0 {
		t.Fatalf("nothing regenerated, yet %v queued", got)
	}
	w.kc.Secrets["apps/team-a-web"] = "regenerated-elsewhere"
	w.kc.Regenerated = map[string][]string{"apps": {"team-a-web"}}
	got := read()
	if len(got) != 1 || got[0].Name != "web" {
		t.Fatalf("queued %v, want the reader of team-a-web alone", got)
	}
	w.reconcile("web")
	if s := string(w.secret("team-a", "web-creds").Data["secret"]); s != "regenerated-elsewhere" {
		t.Fatalf("the woken reader wrote %q, want the regenerated secret", s)
	}

	w.kc.Regenerated = map[string][]string{"apps": {"team-a-web"}}
	w.kc.RegenerationsErr = &gocloak.APIError{Code: 403, Message: "403 Forbidden"} // no view-events
	if got := read(); len(got) != 0 {
		t.Fatalf("a refused read of the admin events queued %v", got)
	}
	// Refused, the realm waits a minute: no request each period.
	w.kc.RegenerationsErr = nil
	calls := w.calls("admin-events ")
	if got := read(); len(got) != 0 || w.calls("admin-events ") != calls {
		t.Fatalf("read again at once after a refusal: queued %v, %d reads", got, w.calls("admin-events ")-calls)
	}
	realms[realmRead{"kc", "apps"}].skipUntil = time.Time{}
	if got := read(); len(got) != 1 {
		t.Fatalf("after the wait, queued %v", got)
	}
}
