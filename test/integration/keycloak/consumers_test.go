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

package keycloak_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestARotationWaitsForItsConsumersRollouts: a rotation with a one-minute
// grace whose consumer takes longer than that to roll out (minReadySeconds)
// keeps the previous secret until the rollout is done: 0 failed logins of
// a consumer per pod that read the secret once at its start. The control,
// a Deployment that reads the same Secret but is not named: its pod is
// never restarted, and fails to log in once the previous secret ends. A
// named consumer whose new pods never schedule holds the rotation until
// rolloutTimeout, then is named in ConsumersTimedOut.
func TestARotationWaitsForItsConsumersRollouts(t *testing.T) {
	ctx := context.Background()
	workloads, err := harness.StartWorkloads(ctx, op.Client, op.Kubeconfig, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(workloads.Stop)
	realm := realmRotatingWithGrace(t, "consumers")
	ns := op.NewNamespace(t, nil)
	if err := op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	server := newServerInRealm(t, kc, realm, ns)
	clientID := fmt.Sprintf("consumed-%04d", rand.IntN(10000))
	if err := createClient(ctx, kc, realm, clientID, ""); err != nil {
		t.Fatal(err)
	}
	k := credential(ns, "app", server, clientID)
	k.Spec.Source.Realm = realm
	k.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	k.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute},
		Consumers: &secretsv1beta1.RotationConsumers{RolloutTimeout: &metav1.Duration{Duration: 2 * time.Minute},
			Workloads: []secretsv1beta1.WorkloadReference{{Kind: "Deployment", Name: "api"}, {Kind: "Deployment", Name: "stuck"}}}}
	if err := op.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(k)
	waitCredential(t, key, secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	// A second client, rotated on schedule, its consumer as slow as api.
	schedClient := fmt.Sprintf("scheduled-%04d", rand.IntN(10000))
	if err := createClient(ctx, kc, realm, schedClient, ""); err != nil {
		t.Fatal(err)
	}
	sched := credential(ns, "sched", server, schedClient)
	sched.Spec.Source.Realm = realm
	sched.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	sched.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Minute},
		Consumers: &secretsv1beta1.RotationConsumers{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sched-api"}}}}
	if err := op.Client.Create(ctx, sched); err != nil {
		t.Fatal(err)
	}
	schedKey := client.ObjectKeyFromObject(sched)
	waitCredential(t, schedKey, secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)

	consumers := map[string]*harness.PodConsumers{}
	secretOf := map[string]string{"api": "app-creds", "control": "app-creds", "stuck": "app-creds", "sched-api": "sched-creds"}
	for name, d := range map[string]*appsv1.Deployment{
		"api":       harness.ConsumerDeployment(ns, "api", "app-creds", 75),
		"control":   harness.ConsumerDeployment(ns, "control", "app-creds", 0),
		"stuck":     harness.ConsumerDeployment(ns, "stuck", "app-creds", 0),
		"sched-api": harness.ConsumerDeployment(ns, "sched-api", "sched-creds", 75),
	} {
		if err := op.Client.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		consumers[name] = harness.StartPodConsumers(ctx, harness.PodConsumerOptions{Reader: op.Client, Namespace: ns, Labels: client.MatchingLabels{"app": name},
			Secret: secretOf[name], KeycloakURL: kc.URL, Realm: realm, Every: time.Second})
		defer consumers[name].Stop()
	}
	NewWithT(t).Eventually(func() int64 {
		return consumers["api"].Pods.Load() + consumers["control"].Pods.Load() + consumers["stuck"].Pods.Load() + consumers["sched-api"].Pods.Load()
	}).WithTimeout(time.Minute).Should(BeEquivalentTo(4), "the Deployments' pods did not start")
	// The stuck Deployment's next pods will not be scheduled.
	var stuck appsv1.Deployment
	if err := op.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stuck"}, &stuck); err != nil {
		t.Fatal(err)
	}
	stuck.Spec.Template.Spec.NodeSelector = map[string]string{"no-such-node": "true"}
	stuck.Spec.Template.Spec.Containers[0].Image = "app:2" // one change, so its rollout begins now and stays
	if err := op.Client.Update(ctx, &stuck); err != nil {
		t.Fatal(err)
	}

	changeCredential(t, key, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "consumers-1"}
	})
	// The scheduled one falls due: its last rotation two hours ago, and a
	// spec change brings the pass now.
	changeStatus(t, schedKey, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Status.LastRotationTime = &metav1.Time{Time: time.Now().Add(-2 * time.Hour)}
	})
	changeCredential(t, schedKey, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.RefreshInterval = &metav1.Duration{Duration: 59 * time.Minute}
	})
	NewWithT(t).Eventually(phaseOf(t, key)).WithTimeout(20 * time.Second).Should(Equal(secretsv1beta1.RotationGracePeriod))
	op.WaitEvent(t, ns, "app", secretsv1beta1.ReasonConsumersRestarted)
	// The grace ends after a minute; api's rollout takes longer: the
	// previous secret stays until it is done.
	NewWithT(t).Eventually(func() string {
		for _, c := range rotationOf(t, key).Consumers {
			if c.Name == "api" {
				return c.State
			}
		}
		return ""
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Equal(secretsv1beta1.ConsumerRolledOut))
	rot := rotationOf(t, key)
	NewWithT(t).Expect(rot.Phase).To(Equal(secretsv1beta1.RotationGracePeriod), "the previous secret was invalidated before api rolled out")
	NewWithT(t).Expect(time.Since(rot.DistributedTime.Time)).To(BeNumerically(">", time.Minute), "api rolled out inside the grace: the test proves nothing")

	// stuck never rolls out: the timeout ends the wait.
	NewWithT(t).Eventually(phaseOf(t, key)).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Equal(secretsv1beta1.RotationCompleted))
	op.WaitEvent(t, ns, "app", secretsv1beta1.ReasonConsumersTimedOut)
	rot = rotationOf(t, key)
	// The timeout counts from the distribution (the restarts follow it in
	// a later pass, by a moment that depends on the machine's load).
	NewWithT(t).Expect(rot.ConsumersDeadline.Time).To(BeTemporally("==", rot.DistributedTime.Add(2*time.Minute)))
	NewWithT(t).Expect(rot.CompletedTime.Before(rot.ConsumersDeadline)).To(BeFalse(), "completed at %s, before the deadline %s", rot.CompletedTime, rot.ConsumersDeadline)
	waitCredential(t, key, secretsv1beta1.TypeRotationReady, metav1.ConditionFalse, secretsv1beta1.ReasonConsumersTimedOut, 10*time.Second)
	time.Sleep(5 * time.Second) // the control's pod logs in with the invalidated secret

	for _, c := range consumers {
		c.Stop()
	}
	// The scheduled rotation: its consumer rolled out past the grace, then
	// the previous secret ended.
	schedRot := rotationOf(t, schedKey)
	if schedRot == nil || schedRot.Phase != secretsv1beta1.RotationCompleted || schedRot.Request != "" || len(schedRot.Consumers) != 1 ||
		schedRot.Consumers[0].State != secretsv1beta1.ConsumerRolledOut || schedRot.CompletedTime.Before(schedRot.Consumers[0].FinishedTime) {
		t.Fatalf("the scheduled rotation: %+v; want Completed after sched-api rolled out", schedRot)
	}
	if s := consumers["sched-api"]; s.Failures.Load() != 0 || s.Pods.Load() < 2 {
		t.Fatalf("sched-api: %d failed logins (first: %v) by %d pods; want none, and its pod replaced", s.Failures.Load(), s.FirstFailure.Load(), s.Pods.Load())
	}
	api, control := consumers["api"], consumers["control"]
	t.Logf("api: %d logins by %d pods, %d failed; control: %d logins, %d failed", api.Logins.Load(), api.Pods.Load(), api.Failures.Load(), control.Logins.Load(), control.Failures.Load())
	if api.Failures.Load() != 0 || api.Pods.Load() < 2 {
		t.Fatalf("api: %d failed logins (first: %v) by %d pods; want none, and its pod replaced", api.Failures.Load(), api.FirstFailure.Load(), api.Pods.Load())
	}
	if control.Failures.Load() == 0 {
		t.Fatal("control: no failed login after the previous secret ended: the consumers count nothing")
	}
}
