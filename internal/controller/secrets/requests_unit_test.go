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
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Requests by annotation: a refresh reads Keycloak now, a rotation
// regenerates now where the namespace may rotate; each is handled once.

// request sets annotation key to id on the stored resource.
func (w *kccWorld) request(name, key, id string) {
	w.t.Helper()
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, &k); err != nil {
		w.t.Fatal(err)
	}
	if k.Annotations == nil {
		k.Annotations = map[string]string{}
	}
	k.Annotations[key] = id
	if err := w.client.Update(context.Background(), &k); err != nil {
		w.t.Fatal(err)
	}
}

func (w *kccWorld) status(name string) secretsv1beta1.KeycloakClientCredentialStatus {
	w.t.Helper()
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, &k); err != nil {
		w.t.Fatal(err)
	}
	return k.Status
}

func (w *kccWorld) calls(prefix string) int {
	n := 0
	for _, c := range w.kc.Calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// drainEvents returns the Events recorded so far.
func (w *kccWorld) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-w.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func TestARefreshRequestReadsKeycloakNowOnce(t *testing.T) {
	w := newKCCWorld(t, teamA("web", "team-a-web"))
	w.reconcile("web")
	w.kc.Secrets["apps/team-a-web"] = "regenerated" // by someone, in Keycloak
	w.reconcile("web")
	if got := string(w.secret("team-a", "web-creds").Data["secret"]); got != "s3cr3t" || w.calls("read ") != 1 {
		t.Fatalf("before the request: Secret holds the new secret %v, %d reads (want the remembered one, 1 read)", got == "regenerated", w.calls("read "))
	}
	w.drainEvents()

	w.request("web", secretsv1beta1.RefreshRequestAnnotation, "ticket-1")
	w.reconcile("web")
	if got := string(w.secret("team-a", "web-creds").Data["secret"]); got != "regenerated" || w.calls("read ") != 2 {
		t.Fatalf("after the request: Secret holds the new secret %v, %d reads (want 2)", got == "regenerated", w.calls("read "))
	}
	if st := w.status("web"); st.LastRefreshRequest != "ticket-1" {
		t.Fatalf("status.lastRefreshRequest = %q, want the request's id", st.LastRefreshRequest)
	}
	if ev := w.drainEvents(); !hasEvent(ev, "Normal Refreshed") {
		t.Fatalf("Events %q, want a Normal Refreshed", ev)
	}
	w.reconcile("web")
	if w.calls("read ") != 2 {
		t.Fatalf("the same request honoured twice: %d reads", w.calls("read "))
	}
}

func TestARotationRequestRegeneratesOnceWhereTheNamespaceMayRotate(t *testing.T) {
	w := newKCCWorld(t, teamA("rot", "team-a-rot"))
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "2026-12-02T12:00:00Z")
	w.reconcile("rot")
	if w.calls("regenerate ") != 1 {
		t.Fatalf("%d regenerations, want 1", w.calls("regenerate "))
	}
	if got := string(w.secret("team-a", "rot-creds").Data["secret"]); got != "r0t-rotated" {
		t.Fatalf("the Secret holds %q, want the regenerated secret", got)
	}
	st := w.status("rot")
	if st.LastRotationRequest != "2026-12-02T12:00:00Z" || st.LastRotationTime == nil {
		t.Fatalf("status: lastRotationRequest %q, lastRotationTime %v", st.LastRotationRequest, st.LastRotationTime)
	}
	if ev := w.drainEvents(); !hasEvent(ev, "Normal Rotated") {
		t.Fatalf("Events %q, want a Normal Rotated", ev)
	}
	w.reconcile("rot")
	if w.calls("regenerate ") != 1 {
		t.Fatalf("the same request rotated twice")
	}
}

func TestARotationRequestWithoutTheGrantIsRefusedAndHandled(t *testing.T) {
	w := newKCCWorld(t, teamA("web", "team-a-web")) // team-a reads team-a-web, may not rotate it
	w.reconcile("web")
	w.drainEvents()
	w.request("web", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.reconcile("web")
	if w.calls("regenerate ") != 0 {
		t.Fatal("a rotation the namespace may not make regenerated the secret")
	}
	if st := w.status("web"); st.LastRotationRequest != "r1" {
		t.Fatalf("status.lastRotationRequest = %q: a refused request must be handled once", st.LastRotationRequest)
	}
	if ev := w.drainEvents(); !hasEvent(ev, "Warning RotationRequestRefused") {
		t.Fatalf("Events %q, want a Warning RotationRequestRefused", ev)
	}
	if ready := w.ready("web"); ready.Status != metav1.ConditionTrue {
		t.Fatalf("Ready %s %s: a refused request must not stop the sync", ready.Status, ready.Reason)
	}
	w.reconcile("web")
	if ev := w.drainEvents(); len(ev) != 0 {
		t.Fatalf("the refusal repeated: %q", ev)
	}
	if got := string(w.secret("team-a", "web-creds").Data["secret"]); got != "s3cr3t" {
		t.Fatalf("the Secret holds %q", got)
	}
}

func TestARequestWithAnInvalidIDIsNotActedOn(t *testing.T) {
	w := newKCCWorld(t, teamA("rot", "team-a-rot"))
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "not a valid id")
	w.reconcile("rot")
	if w.calls("regenerate ") != 0 || w.status("rot").LastRotationRequest != "" {
		t.Fatalf("an invalid id: %d regenerations, echoed %q", w.calls("regenerate "), w.status("rot").LastRotationRequest)
	}
	if c := meta.FindStatusCondition(w.status("rot").Conditions, secretsv1beta1.TypeReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready %+v", c)
	}
}

func TestDecideRotation(t *testing.T) {
	now := time.Now()
	scheduled := func(createdAgo time.Duration, annotations map[string]string, last string) *secretsv1beta1.KeycloakClientCredential {
		k := teamA("rot", "team-a-rot")
		k.CreationTimestamp = metav1.NewTime(now.Add(-createdAgo))
		k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
		k.Annotations = annotations
		k.Status.LastRotationRequest = last
		return k
	}
	ask := map[string]string{secretsv1beta1.RotationRequestAnnotation: "r2"}
	for name, tc := range map[string]struct {
		kcc  *secretsv1beta1.KeycloakClientCredential
		want rotation
	}{
		"not due":                      {scheduled(time.Minute, nil, ""), rotation{}},
		"due":                          {scheduled(2*time.Hour, nil, ""), rotation{step: stepStart}},
		"not due, a request pending":   {scheduled(time.Minute, ask, "r1"), rotation{step: stepStart, request: "r2"}},
		"not due, the request handled": {scheduled(time.Minute, ask, "r2"), rotation{}},
		"no schedule, a request pending": {func() *secretsv1beta1.KeycloakClientCredential {
			k := scheduled(0, ask, "")
			k.Spec.Rotation = nil
			return k
		}(), rotation{step: stepStart, request: "r2"}},
		"no schedule, nothing requested": {func() *secretsv1beta1.KeycloakClientCredential {
			k := scheduled(0, nil, "")
			k.Spec.Rotation = nil
			return k
		}(), rotation{}},
	} {
		if got := decideRotation(tc.kcc, now); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

func TestARotationRequestWaitsForTheGapAfterTheLastRotation(t *testing.T) {
	now := time.Now()
	kcc := teamA("rot", "team-a-rot")
	// A grace period shorter than the gap: the first rotation is over
	// when the gap ends.
	kcc.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute}}
	w := newKCCWorld(t, kcc)
	w.r.Now = func() time.Time { return now }
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r2") // a minute later
	now = now.Add(time.Minute)
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(kcc)})
	if w.calls("regenerate ") != 1 || w.status("rot").LastRotationRequest != "r1" {
		t.Fatalf("inside the gap: %d regenerations, last request %q; want 1, r1 (r2 pending)", w.calls("regenerate "), w.status("rot").LastRotationRequest)
	}
	if res.RequeueAfter > secretsv1beta1.RotationRequestGap-time.Minute {
		t.Fatalf("the pending request is looked at again in %s, want when the gap ends (%s)", res.RequeueAfter, secretsv1beta1.RotationRequestGap-time.Minute)
	}
	now = now.Add(secretsv1beta1.RotationRequestGap)
	w.reconcile("rot")
	if w.calls("regenerate ") != 2 || w.status("rot").LastRotationRequest != "r2" {
		t.Fatalf("after the gap: %d regenerations, last request %q; want 2, r2", w.calls("regenerate "), w.status("rot").LastRotationRequest)
	}
}

func TestARotationQueuesTheOtherReadersOfTheClient(t *testing.T) {
	rot, reader, other := teamA("rot", "team-a-rot"), teamA("reader", "team-a-rot"), teamA("web", "team-a-web")
	w := newKCCWorld(t, rot, reader, other)
	w.r.readers = newReadersOfRotated()
	for _, name := range []string{"rot", "reader", "web"} {
		w.reconcile(name)
	}
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.reconcile("rot")
	select {
	case e := <-w.r.readers.ch:
		if e.Object.Name != "reader" {
			t.Fatalf("queued %s, want the other reader of team-a-rot", e.Object)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other reader of the rotated client was not queued")
	}
	select {
	case e := <-w.r.readers.ch:
		t.Fatalf("queued %s too: only readers of the rotated client follow", e.Object)
	case <-time.After(100 * time.Millisecond):
	}
	w.reconcile("reader") // the pass the queue brings
	if got := string(w.secret("team-a", "reader-creds").Data["secret"]); got != "r0t-rotated" {
		t.Fatalf("the other reader's Secret holds %q, want the rotated secret", got)
	}
}
