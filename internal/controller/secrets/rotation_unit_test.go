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
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

func TestDecideRotationGoesOnWithTheRotationInProgress(t *testing.T) {
	now := time.Now()
	in := func(phase string, graceEnds time.Duration) *secretsv1beta1.KeycloakClientCredential {
		k := teamA("rot", "team-a-rot")
		k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "r9"}
		ends := metav1.NewTime(now.Add(graceEnds))
		k.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: phase, GraceEndsTime: &ends, Server: "kc", Realm: "apps", ClientID: "team-a-rot"}
		return k
	}
	moved := in(secretsv1beta1.RotationGracePeriod, -time.Second)
	moved.Spec.Source.ClientID = "team-a-web"
	for name, tc := range map[string]struct {
		kcc  *secretsv1beta1.KeycloakClientCredential
		want rotation
	}{
		// A request waits for the rotation in progress to end.
		"regenerating":       {in(secretsv1beta1.RotationRegenerating, 0), rotation{step: stepRegenerate}},
		"distributing":       {in(secretsv1beta1.RotationDistributing, 0), rotation{step: stepDistribute}},
		"in the grace":       {in(secretsv1beta1.RotationGracePeriod, time.Minute), rotation{step: stepWait}},
		"the grace is over":  {in(secretsv1beta1.RotationGracePeriod, -time.Second), rotation{step: stepInvalidate}},
		"completed, request": {in(secretsv1beta1.RotationCompleted, 0), rotation{step: stepStart, request: "r9"}},
		"the spec names another client": {moved, rotation{step: stepAbandon,
			why: `the spec no longer names client "team-a-rot" in realm "apps" of KeycloakServer "kc"`}},
	} {
		if got := decideRotation(tc.kcc, now); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

func TestDecideGrace(t *testing.T) {
	offered := func(life time.Duration) keycloak.Grace { return keycloak.Grace{Offered: true, Lifetime: life} }
	none := keycloak.Grace{Why: "the feature is off"}
	for name, tc := range map[string]struct {
		grace          keycloak.Grace
		acceptDowntime bool
		withGrace      bool
		refused        string
	}{
		"offered, long enough":           {grace: offered(time.Hour), withGrace: true},
		"offered, too short":             {grace: offered(12 * time.Minute), refused: "valid for 12m0s"},
		"too short, downtime accepted":   {grace: offered(12 * time.Minute), acceptDowntime: true},
		"not offered":                    {grace: none, refused: "the feature is off"},
		"not offered, downtime accepted": {grace: none, acceptDowntime: true},
	} {
		withGrace, why := decideGrace(tc.grace, 10*time.Minute, tc.acceptDowntime)
		if withGrace != tc.withGrace || (tc.refused == "") != (why == "") || !strings.Contains(why, tc.refused) {
			t.Errorf("%s: withGrace %v, refused %q; want %v, %q", name, withGrace, why, tc.withGrace, tc.refused)
		}
	}
}

func TestClientRotationWait(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		state keycloak.SecretState
		from  string // "" when the rotation may start now
	}{
		"no record (a secret the admin set)": {},
		"issued long ago":                    {state: keycloak.SecretState{CreatedAt: now.Add(-time.Hour)}},
		"issued a minute ago":                {state: keycloak.SecretState{CreatedAt: now.Add(-time.Minute)}, from: "12:04:00Z: its current secret was issued at"},
		"issued just at the gap":             {state: keycloak.SecretState{CreatedAt: now.Add(-secretsv1beta1.RotationRequestGap)}},
		"previous valid for other readers": {state: keycloak.SecretState{CreatedAt: now.Add(-time.Hour), PreviousExpires: now.Add(20 * time.Minute)},
			from: "12:20:00Z: its previous secret stays valid"},
		"previous expires before the gap": {state: keycloak.SecretState{CreatedAt: now.Add(-time.Minute), PreviousExpires: now.Add(time.Minute)},
			from: "12:04:00Z: its current secret"},
		"previous expired":                   {state: keycloak.SecretState{CreatedAt: now.Add(-time.Hour), PreviousExpires: now.Add(-time.Minute)}},
		"previous valid, no creation record": {state: keycloak.SecretState{PreviousExpires: now.Add(time.Hour)}, from: "13:00:00Z"},
	} {
		got := clientRotationWait("web", tc.state, now)
		if (tc.from == "") != (got == "") || !strings.Contains(got, tc.from) {
			t.Errorf("%s: %q, want one naming %q", name, got, tc.from)
		}
	}
}

// rotating is a credential rotated on request, with a key for the previous
// secret.
func rotating(grace time.Duration) *secretsv1beta1.KeycloakClientCredential {
	k := teamA("rot", "team-a-rot")
	k.Spec.Target.Keys.PreviousClientSecret = "previous"
	k.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: grace}}
	return k
}

func TestARotationKeepsThePreviousSecretUntilTheGraceAfterTheLastTarget(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, rotating(10*time.Minute))
	w.r.Now = func() time.Time { return now }
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.drainEvents()
	w.reconcile("rot")

	st := w.status("rot")
	if st.Rotation == nil || st.Rotation.Phase != secretsv1beta1.RotationGracePeriod || st.Rotation.Request != "r1" || !st.Rotation.WithGrace {
		t.Fatalf("after the pass that rotated: %+v, want phase GracePeriod with grace for r1", st.Rotation)
	}
	for _, at := range []*metav1.Time{st.Rotation.StartedTime, st.Rotation.RegeneratedTime, st.Rotation.DistributedTime} {
		if at == nil {
			t.Fatalf("a step's time is missing: %+v", st.Rotation)
		}
	}
	if !st.Rotation.GraceEndsTime.Time.Equal(st.Rotation.DistributedTime.Add(10 * time.Minute)) {
		t.Fatalf("grace ends %s, want 10m after the last target was written (%s)", st.Rotation.GraceEndsTime, st.Rotation.DistributedTime)
	}
	s := w.secret("team-a", "rot-creds")
	if string(s.Data["secret"]) != "r0t-rotated" || string(s.Data["previous"]) != "r0t" {
		t.Fatalf("in the grace the Secret holds secret %q, previous %q; want both", s.Data["secret"], s.Data["previous"])
	}
	ev := w.drainEvents()
	if !hasEvent(ev, "Normal Rotated") || !hasEvent(ev, "Normal RotationDistributed") {
		t.Fatalf("events %v, want Rotated and RotationDistributed", ev)
	}
	if c := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeRotationReady); c == nil || c.Reason != secretsv1beta1.RotationGracePeriod {
		t.Fatalf("RotationReady %+v, want True GracePeriod", c)
	}

	// Inside the grace: the previous secret stays valid, and the pass
	// comes back when the grace ends.
	now = now.Add(9 * time.Minute)
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: "rot"}})
	if w.calls("invalidate ") != 0 {
		t.Fatal("the previous secret was invalidated inside the grace period")
	}
	if res.RequeueAfter > time.Minute {
		t.Fatalf("looked at again in %s, want when the grace ends (1m)", res.RequeueAfter)
	}

	now = now.Add(time.Minute)
	w.reconcile("rot")
	w.reconcile("rot")
	if w.calls("invalidate ") != 1 || w.calls("regenerate ") != 1 {
		t.Fatalf("after the grace: %d invalidations, %d regenerations; want 1, 1", w.calls("invalidate "), w.calls("regenerate "))
	}
	st = w.status("rot")
	if st.Rotation.Phase != secretsv1beta1.RotationCompleted || st.Rotation.CompletedTime == nil {
		t.Fatalf("after the grace: %+v, want Completed", st.Rotation)
	}
	if _, still := w.secret("team-a", "rot-creds").Data["previous"]; still {
		t.Fatal("the invalidated previous secret is still in the Secret")
	}
	if !hasEvent(w.drainEvents(), "Normal PreviousSecretInvalidated") {
		t.Fatal("no PreviousSecretInvalidated event")
	}
}

func TestARotationWithoutGraceIsRefusedUnlessDowntimeIsAccepted(t *testing.T) {
	w := newKCCWorld(t, rotating(10*time.Minute))
	w.kc.Grace = keycloak.Grace{Why: "Keycloak's feature client-secret-rotation is off"}
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.drainEvents()
	w.reconcile("rot")
	if w.calls("regenerate ") != 0 {
		t.Fatal("regenerated although Keycloak would not keep the previous secret")
	}
	st := w.status("rot")
	c := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeRotationReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != secretsv1beta1.ReasonGraceUnavailable || !strings.Contains(c.Message, "acceptDowntime") {
		t.Fatalf("RotationReady %+v, want False GraceUnavailable naming spec.rotation.acceptDowntime", c)
	}
	if r := w.ready("rot"); r.Status != metav1.ConditionFalse || r.Reason != secretsv1beta1.ReasonGraceUnavailable {
		t.Fatalf("Ready %+v, want False GraceUnavailable", r)
	}
	if st.LastRotationRequest != "r1" {
		t.Fatalf("the refused request is not recorded as handled: %q", st.LastRotationRequest)
	}
	if ev := w.drainEvents(); !hasEvent(ev, "Warning GraceUnavailable") {
		t.Fatalf("events %v, want a Warning GraceUnavailable", ev)
	}

	// Accepting downtime: the rotation goes ahead, said to be without grace.
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "rot"}, &k); err != nil {
		t.Fatal(err)
	}
	k.Spec.Rotation.AcceptDowntime = true
	if err := w.client.Update(context.Background(), &k); err != nil {
		t.Fatal(err)
	}
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r2")
	w.reconcile("rot")
	st = w.status("rot")
	if w.calls("regenerate ") != 1 || st.Rotation == nil || st.Rotation.Phase != secretsv1beta1.RotationCompleted || st.Rotation.WithGrace {
		t.Fatalf("with downtime accepted: %d regenerations, rotation %+v; want 1, Completed without grace", w.calls("regenerate "), st.Rotation)
	}
	if _, has := w.secret("team-a", "rot-creds").Data["previous"]; has {
		t.Fatal("a previous secret Keycloak does not keep valid was written")
	}
	if ev := w.drainEvents(); !hasEvent(ev, "Warning RotatedWithoutGrace") {
		t.Fatalf("events %v, want a Warning RotatedWithoutGrace", ev)
	}
	if w.calls("invalidate ") != 0 {
		t.Fatal("invalidated a previous secret that does not exist")
	}
}

// A restart between recording Regenerating and Keycloak's answer: the
// secret is regenerated once, whether Keycloak got the request or not.
func TestARotationInterruptedBeforeItsRecordRegeneratesOnce(t *testing.T) {
	for name, regeneratedBefore := range map[string]bool{"Keycloak regenerated": true, "Keycloak did not": false} {
		t.Run(name, func(t *testing.T) {
			w := newKCCWorld(t, rotating(10*time.Minute))
			w.reconcile("rot")
			state, _ := w.kc.SecretState(context.Background(), "apps", "team-a-rot")
			var k secretsv1beta1.KeycloakClientCredential
			if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "rot"}, &k); err != nil {
				t.Fatal(err)
			}
			started := metav1.Now()
			k.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: secretsv1beta1.RotationRegenerating, WithGrace: true, PreviousSecretCreated: state.Created, StartedTime: &started,
				Server: "kc", Realm: "apps", ClientID: "team-a-rot"}
			k.Status.LastRotationTime = &started
			if err := w.client.Status().Update(context.Background(), &k); err != nil {
				t.Fatal(err)
			}
			if regeneratedBefore {
				_ = w.kc.RegenerateSecret(context.Background(), "apps", "team-a-rot")
			}
			w.reconcile("rot")
			w.reconcile("rot")
			if w.kc.Created["apps/team-a-rot"] != 1 {
				t.Fatalf("%d regenerations in all, want 1", w.kc.Created["apps/team-a-rot"])
			}
			if st := w.status("rot"); st.Rotation.Phase != secretsv1beta1.RotationGracePeriod {
				t.Fatalf("after the restart: %+v, want GracePeriod", st.Rotation)
			}
			if got := string(w.secret("team-a", "rot-creds").Data["secret"]); got != "r0t-rotated" {
				t.Fatalf("the Secret holds %q, want the new secret", got)
			}
		})
	}
}

func TestARotationWaitsForEveryTargetThatAcceptsTheSecret(t *testing.T) {
	target := func(reason string) secretsv1beta1.TargetStatus {
		return secretsv1beta1.TargetStatus{Namespace: "ns", Synced: reason == secretsv1beta1.ReasonSynced, Reason: reason}
	}
	for name, tc := range map[string]struct {
		targets []secretsv1beta1.TargetStatus
		want    bool
	}{
		"all written":                      {[]secretsv1beta1.TargetStatus{target(secretsv1beta1.ReasonSynced)}, true},
		"one failed to write (retried)":    {[]secretsv1beta1.TargetStatus{target(secretsv1beta1.ReasonSynced), target(secretsv1beta1.ReasonTargetFailed)}, false},
		"one withdrew its consent":         {[]secretsv1beta1.TargetStatus{target(secretsv1beta1.ReasonSynced), target(secretsv1beta1.ReasonTargetNotAllowed)}, true},
		"a foreign Secret in the way":      {[]secretsv1beta1.TargetStatus{target(secretsv1beta1.ReasonSecretNotOwned)}, true},
		"a Secret not written for a cause": {[]secretsv1beta1.TargetStatus{target("")}, false},
	} {
		if got := allAccepted(tc.targets); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// inGrace brings a rotating credential into its grace period.
func inGrace(t *testing.T, w *kccWorld) {
	t.Helper()
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.reconcile("rot")
	if st := w.status("rot"); st.Rotation == nil || st.Rotation.Phase != secretsv1beta1.RotationGracePeriod {
		t.Fatalf("not in the grace period: %+v", st.Rotation)
	}
}

func (w *kccWorld) edit(name string, change func(*secretsv1beta1.KeycloakClientCredential)) {
	w.t.Helper()
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, &k); err != nil {
		w.t.Fatal(err)
	}
	change(&k)
	if err := w.client.Update(context.Background(), &k); err != nil {
		w.t.Fatal(err)
	}
}

// A tenant moves a rotating credential to another client in the grace
// period: nothing of that client is invalidated, and its previous secret
// is never read.
func TestARotationActsOnlyOnTheClientItBeganWith(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, rotating(time.Minute))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	// Even where the tenant may rotate both clients: the rotation under
	// way is team-a-rot's.
	var server secretsv1beta1.KeycloakServer
	if err := w.client.Get(context.Background(), client.ObjectKey{Name: "kc"}, &server); err != nil {
		t.Fatal(err)
	}
	server.Spec.Access[0].Rotate = true
	if err := w.client.Update(context.Background(), &server); err != nil {
		t.Fatal(err)
	}
	w.edit("rot", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Source.ClientID = "team-a-web" })
	now = now.Add(2 * time.Minute)
	w.kc.Calls = nil
	w.drainEvents()
	w.reconcile("rot")
	for _, c := range w.kc.Calls {
		if strings.HasSuffix(c, "team-a-web") && !strings.HasPrefix(c, "read ") {
			t.Fatalf("Keycloak was asked %q about a client whose rotation was never granted", c)
		}
	}
	if st := w.status("rot"); st.Rotation.Phase != secretsv1beta1.RotationCompleted {
		t.Fatalf("the rotation of team-a-rot goes on for team-a-web: %+v", st.Rotation)
	}
	if !hasEvent(w.drainEvents(), "Warning RotationAbandoned") {
		t.Fatal("no RotationAbandoned event")
	}
	if _, has := w.secret("team-a", "rot-creds").Data["previous"]; has {
		t.Fatal("a previous secret is written for a client not being rotated")
	}
}

// The admin withdraws the rotate grant in the grace period: the previous
// secret is not invalidated by the operator (Keycloak's expiry ends it).
func TestARotationStopsWhenTheGrantIsWithdrawn(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, rotating(time.Minute))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	var server secretsv1beta1.KeycloakServer
	if err := w.client.Get(context.Background(), client.ObjectKey{Name: "kc"}, &server); err != nil {
		t.Fatal(err)
	}
	for i := range server.Spec.Access {
		server.Spec.Access[i].Rotate = false
	}
	if err := w.client.Update(context.Background(), &server); err != nil {
		t.Fatal(err)
	}
	w.edit("rot", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Rotation = nil }) // the webhook asks this of it
	now = now.Add(2 * time.Minute)
	w.reconcile("rot")
	if w.calls("invalidate ") != 0 {
		t.Fatal("the previous secret was invalidated without the right to rotate the client")
	}
	if st := w.status("rot"); st.Rotation.Phase != secretsv1beta1.RotationCompleted {
		t.Fatalf("rotation %+v, want it ended", st.Rotation)
	}
}

// Someone regenerates the secret in Keycloak during the grace: the
// previous secret Keycloak then keeps is theirs, and is left alone.
func TestThePreviousSecretOfAnotherRegenerationIsLeftAlone(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, rotating(time.Minute))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	_ = w.kc.RegenerateSecret(context.Background(), "apps", "team-a-rot")
	now = now.Add(2 * time.Minute)
	w.reconcile("rot")
	if w.calls("invalidate ") != 0 {
		t.Fatal("invalidated the previous secret of a regeneration made outside this rotation")
	}
	if st := w.status("rot"); st.Rotation.Phase != secretsv1beta1.RotationCompleted {
		t.Fatalf("rotation %+v, want it completed", st.Rotation)
	}
}

// Keycloak refuses to show its client policies (no view-realm): the due
// rotation does not start, RotationReady says why, and the Secrets stay in
// step meanwhile.
func TestAPolicyReadFailureStopsTheRotationNotTheSync(t *testing.T) {
	w := newKCCWorld(t, rotating(time.Minute))
	w.kc.GraceErr = errors.New("403 Forbidden")
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.reconcile("rot")
	if w.calls("regenerate ") != 0 {
		t.Fatal("regenerated without knowing whether Keycloak keeps the previous secret")
	}
	st := w.status("rot")
	c := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeRotationReady)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "403") {
		t.Fatalf("RotationReady %+v, want False naming the failure", c)
	}
	if s := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeSecretsSynced); s == nil || s.Status != metav1.ConditionTrue {
		t.Fatalf("SecretsSynced %+v: the failed policy read stopped the sync", s)
	}
}

// Two credentials rotating one client: the second waits for the first
// (Keycloak keeps one previous secret per client).
func TestASecondRotationOfTheSameClientWaits(t *testing.T) {
	now := time.Now()
	first, other := rotating(time.Minute), rotating(time.Minute)
	other.Name, other.Spec.Target.SecretName = "rot2", "rot2-creds"
	first.UID, other.UID = "uid-rot", "uid-rot2"
	w := newKCCWorld(t, first, other)
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	w.reconcile("rot2")
	w.request("rot2", secretsv1beta1.RotationRequestAnnotation, "r1")
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: "rot2"}})
	if w.calls("regenerate ") != 1 {
		t.Fatalf("%d regenerations, want 1: the second rotation did not wait", w.calls("regenerate "))
	}
	if c := meta.FindStatusCondition(w.status("rot2").Conditions, secretsv1beta1.TypeRotationReady); c == nil || c.Reason != secretsv1beta1.ReasonRotationWaiting {
		t.Fatalf("RotationReady %+v, want Waiting", c)
	}
	if res.RequeueAfter < 10*time.Second {
		t.Fatalf("looked at again in %s: a waiting rotation must not spin", res.RequeueAfter)
	}
	now = now.Add(2 * time.Minute)
	w.reconcile("rot")
	w.reconcile("rot2")
	if w.calls("regenerate ") != 2 {
		t.Fatalf("%d regenerations after the first completed, want 2", w.calls("regenerate "))
	}
}

// A request past the gap during a rotation waits for it without a pass a
// second.
func TestARequestDuringARotationDoesNotSpin(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, rotating(time.Hour))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	now = now.Add(secretsv1beta1.RotationRequestGap + time.Minute)
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r2")
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: "rot"}})
	if res.RequeueAfter < time.Minute {
		t.Fatalf("looked at again in %s during the grace, want when it ends", res.RequeueAfter)
	}
}
