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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
)

// deployment is a workload of ns whose pods read Secret secret from an
// environment variable ("" reads none).
func deployment(ns, name, secret string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}}}
	c := corev1.Container{Name: "app", Image: "app"}
	if secret != "" {
		c.Env = []corev1.EnvVar{{Name: "CLIENT_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "secret"}}}}
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{c}
	return d
}

func consuming(timeout time.Duration, workloads ...string) *secretsv1beta1.KeycloakClientCredential {
	k := rotating(10 * time.Minute)
	k.Spec.Rotation.Consumers = &secretsv1beta1.RotationConsumers{RolloutTimeout: &metav1.Duration{Duration: timeout}}
	for _, name := range workloads {
		k.Spec.Rotation.Consumers.Workloads = append(k.Spec.Rotation.Consumers.Workloads, secretsv1beta1.WorkloadReference{Kind: rollout.KindDeployment, Name: name})
	}
	return k
}

func (w *kccWorld) deployment(ns, name string) *appsv1.Deployment {
	w.t.Helper()
	var d appsv1.Deployment
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
		w.t.Fatal(err)
	}
	return &d
}

// rolledOut gives the Deployment the status its controller would once
// every pod runs the restarted template.
func (w *kccWorld) rolledOut(ns, name string) {
	w.t.Helper()
	d := w.deployment(ns, name)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, ReadyReplicas: 1}
	if err := w.client.Status().Update(context.Background(), d); err != nil {
		w.t.Fatal(err)
	}
}

// A rotation with consumers restarts, in its grace period, the workloads
// of the target namespace that read the Secret, and invalidates the
// previous secret only once they rolled out, however short the grace; a
// workload that does not read the Secret, or lives in a namespace that
// does not take it, is never touched.
func TestARotationRestartsItsConsumersAndWaitsForTheirRollout(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, consuming(30*time.Minute, "api", "unrelated"),
		deployment("team-a", "api", "rot-creds"), deployment("team-a", "unrelated", ""), deployment("team-b", "api", "rot-creds"))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	w.drainEvents()
	w.reconcile("rot")

	restarted := w.deployment("team-a", "api").Spec.Template.Annotations[rollout.RestartedAtAnnotation]
	if restarted == "" {
		t.Fatal("the consumer was not restarted in the grace period")
	}
	for _, untouched := range []*appsv1.Deployment{w.deployment("team-a", "unrelated"), w.deployment("team-b", "api")} {
		if _, touched := untouched.Spec.Template.Annotations[rollout.RestartedAtAnnotation]; touched {
			t.Errorf("Deployment %s/%s was restarted: it does not read the Secret, or its namespace does not take it", untouched.Namespace, untouched.Name)
		}
	}
	rot := w.status("rot").Rotation
	if len(rot.Consumers) != 1 || rot.Consumers[0].Name != "api" || rot.Consumers[0].State != secretsv1beta1.ConsumerRollingOut || rot.ConsumersDeadline == nil {
		t.Fatalf("status.rotation.consumers %+v (deadline %v), want api RollingOut", rot.Consumers, rot.ConsumersDeadline)
	}
	ev := w.drainEvents()
	if !hasEvent(ev, "Normal ConsumersRestarted") || !hasEvent(ev, "Warning ConsumerIgnored") {
		t.Fatalf("events %v, want ConsumersRestarted and ConsumerIgnored (unrelated reads no Secret)", ev)
	}

	// The grace is over, the rollout is not: the previous secret stays,
	// and the rollout is looked at again within seconds.
	now = now.Add(11 * time.Minute)
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: "rot"}})
	if w.calls("invalidate ") != 0 {
		t.Fatal("the previous secret was invalidated before the consumer rolled out")
	}
	if res.RequeueAfter > consumerPoll {
		t.Fatalf("looked at again in %s, want within %s", res.RequeueAfter, consumerPoll)
	}
	if c := meta.FindStatusCondition(w.status("rot").Conditions, secretsv1beta1.TypeRotationReady); c == nil || !strings.Contains(c.Message, "0 of 1 consumer(s) rolled out") {
		t.Fatalf("RotationReady %+v, want it to say how the consumers stand", c)
	}

	w.rolledOut("team-a", "api")
	w.reconcile("rot")
	rot = w.status("rot").Rotation
	if w.calls("invalidate ") != 1 || rot.Phase != secretsv1beta1.RotationCompleted || rot.Consumers[0].State != secretsv1beta1.ConsumerRolledOut || rot.Consumers[0].FinishedTime == nil {
		t.Fatalf("after the rollout: %d invalidations, rotation %+v; want the previous secret invalidated and api RolledOut", w.calls("invalidate "), rot)
	}
	ev = w.drainEvents()
	if !hasEvent(ev, "Normal ConsumerRolledOut") || !hasEvent(ev, "Normal PreviousSecretInvalidated") {
		t.Fatalf("events %v, want ConsumerRolledOut then PreviousSecretInvalidated", ev)
	}
	if got := w.deployment("team-a", "api").Spec.Template.Annotations[rollout.RestartedAtAnnotation]; got != restarted {
		t.Fatalf("restarted again: %q after %q", got, restarted)
	}
}

// A consumer that never rolls out holds the previous secret until the
// rollout timeout, not longer: then it is invalidated, with a Warning and
// RotationReady False naming the consumer.
func TestARolloutThatNeverFinishesHitsTheTimeout(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, consuming(20*time.Minute, "api"), deployment("team-a", "api", "rot-creds"))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	w.reconcile("rot")
	w.drainEvents()

	now = now.Add(19 * time.Minute)
	w.reconcile("rot")
	if w.calls("invalidate ") != 0 {
		t.Fatal("invalidated before the rollout timeout")
	}
	now = now.Add(2 * time.Minute)
	w.reconcile("rot")
	st := w.status("rot")
	if w.calls("invalidate ") != 1 || st.Rotation.Phase != secretsv1beta1.RotationCompleted || st.Rotation.Consumers[0].State != secretsv1beta1.ConsumerTimedOut {
		t.Fatalf("after the timeout: %d invalidations, rotation %+v; want invalidated, api TimedOut", w.calls("invalidate "), st.Rotation)
	}
	if !hasEvent(w.drainEvents(), "Warning ConsumersTimedOut") {
		t.Fatal("no ConsumersTimedOut Warning")
	}
	c := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeRotationReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != secretsv1beta1.ReasonConsumersTimedOut || !strings.Contains(c.Message, "Deployment team-a/api") {
		t.Fatalf("RotationReady %+v, want False ConsumersTimedOut naming Deployment team-a/api", c)
	}
}

// Discovery finds the workloads that read the Secret, and only those.
func TestDiscoveredConsumersAreTheWorkloadsThatReadTheSecret(t *testing.T) {
	k := rotating(10 * time.Minute)
	k.Spec.Rotation.Consumers = &secretsv1beta1.RotationConsumers{Discover: true}
	w := newKCCWorld(t, k, deployment("team-a", "reader", "rot-creds"), deployment("team-a", "bystander", "other-secret"))
	inGrace(t, w)
	w.reconcile("rot")
	rot := w.status("rot").Rotation
	if len(rot.Consumers) != 1 || rot.Consumers[0].Name != "reader" {
		t.Fatalf("consumers %+v, want reader alone", rot.Consumers)
	}
	if _, touched := w.deployment("team-a", "bystander").Spec.Template.Annotations[rollout.RestartedAtAnnotation]; touched {
		t.Fatal("a Deployment that reads another Secret was restarted")
	}
}

// A secret regenerated in Keycloak by hand reaches the Secret at the next
// refresh, and the consumers restart then (no grace to wait in); a
// tenant's edit of the Secret is repaired and restarts nothing.
func TestASecretChangedByHandRestartsTheConsumers(t *testing.T) {
	k := consuming(20*time.Minute, "api")
	w := newKCCWorld(t, k, deployment("team-a", "api", "rot-creds"))
	w.reconcile("rot")
	w.drainEvents()

	edited := w.secret("team-a", "rot-creds")
	edited.Data["secret"] = []byte("typed-by-hand")
	if err := w.client.Update(context.Background(), edited); err != nil {
		t.Fatal(err)
	}
	w.reconcile("rot")
	if got := string(w.secret("team-a", "rot-creds").Data["secret"]); got != "r0t" {
		t.Fatalf("the edited Secret holds %q, want it repaired", got)
	}
	if _, restarted := w.deployment("team-a", "api").Spec.Template.Annotations[rollout.RestartedAtAnnotation]; restarted {
		t.Fatal("a repair of an edited Secret restarted the consumers")
	}

	w.kc.Secrets["apps/team-a-rot"] = "regenerated-by-hand"
	w.request("rot", secretsv1beta1.RefreshRequestAnnotation, "after-hand")
	w.reconcile("rot")
	if got := string(w.secret("team-a", "rot-creds").Data["secret"]); got != "regenerated-by-hand" {
		t.Fatalf("the Secret holds %q, want Keycloak's new secret", got)
	}
	if _, restarted := w.deployment("team-a", "api").Spec.Template.Annotations[rollout.RestartedAtAnnotation]; !restarted {
		t.Fatal("the consumers were not restarted after the secret changed in Keycloak")
	}
	if ev := w.drainEvents(); !hasEvent(ev, "Normal ConsumersRestarted") {
		t.Fatalf("events %v, want ConsumersRestarted", ev)
	}
}

// A rotation that keeps no previous secret (downtime accepted) restarts
// its consumers once it completed, without waiting for them.
func TestARotationWithoutGraceRestartsItsConsumersAtOnce(t *testing.T) {
	k := consuming(20*time.Minute, "api")
	k.Spec.Rotation.AcceptDowntime = true
	w := newKCCWorld(t, k, deployment("team-a", "api", "rot-creds"))
	w.kc.Grace = keycloak.Grace{Why: "Keycloak's feature client-secret-rotation is off"}
	w.reconcile("rot")
	w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
	w.reconcile("rot")
	if rot := w.status("rot").Rotation; rot == nil || rot.Phase != secretsv1beta1.RotationCompleted || rot.WithGrace {
		t.Fatalf("rotation %+v, want Completed without grace", rot)
	}
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: "rot"}})
	if _, restarted := w.deployment("team-a", "api").Spec.Template.Annotations[rollout.RestartedAtAnnotation]; !restarted {
		t.Fatalf("the consumer of a rotation without grace was not restarted (next look in %s)", res.RequeueAfter)
	}
	if c := w.status("rot").Rotation.Consumers; len(c) != 1 || c[0].State != secretsv1beta1.ConsumerRestarted {
		t.Fatalf("consumers %+v, want api Restarted (not waited for)", c)
	}
}

// A namespace that stops accepting the Secret during the wait: its
// consumer is dropped, neither read nor waited for any more.
func TestAConsumerWhoseNamespaceWithdrawsConsentIsDropped(t *testing.T) {
	now := time.Now()
	k := consuming(30*time.Minute, "api")
	k.Spec.Target.Namespaces = []string{"team-a", "team-b"}
	w := newKCCWorld(t, k, deployment("team-b", "api", "rot-creds"))
	consent := func(on bool) {
		var ns corev1.Namespace
		if err := w.client.Get(context.Background(), client.ObjectKey{Name: "team-b"}, &ns); err != nil {
			t.Fatal(err)
		}
		ns.Annotations = map[string]string{}
		if on {
			ns.Annotations["secrets.carbogame.com/allowed-source-namespaces"] = "team-a"
		}
		if err := w.client.Update(context.Background(), &ns); err != nil {
			t.Fatal(err)
		}
	}
	consent(true)
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	w.reconcile("rot")
	if rot := w.status("rot").Rotation; len(rot.Consumers) != 1 || rot.Consumers[0].Namespace != "team-b" {
		t.Fatalf("consumers %+v, want team-b/api", rot.Consumers)
	}
	consent(false)
	w.reconcile("rot")
	if c := w.status("rot").Rotation.Consumers[0]; c.State != secretsv1beta1.ConsumerDropped {
		t.Fatalf("consumer %+v after the namespace withdrew its consent, want Dropped", c)
	}
	now = now.Add(11 * time.Minute)
	w.reconcile("rot")
	if w.calls("invalidate ") != 1 {
		t.Fatal("the rotation waited for a consumer its namespace no longer lets it follow")
	}
}

// Following a rollout every few seconds reads Keycloak at the refresh,
// not at each look.
func TestFollowingARolloutCostsKeycloakNothing(t *testing.T) {
	now := time.Now()
	w := newKCCWorld(t, consuming(30*time.Minute, "api"), deployment("team-a", "api", "rot-creds"))
	w.r.Now = func() time.Time { return now }
	inGrace(t, w)
	w.reconcile("rot")
	reads := w.calls("read ")
	for range 5 {
		now = now.Add(consumerPoll)
		w.reconcile("rot")
	}
	if got := w.calls("read ") - reads; got != 0 {
		t.Fatalf("%d Keycloak reads in 5 looks at the rollout, want none", got)
	}
}
