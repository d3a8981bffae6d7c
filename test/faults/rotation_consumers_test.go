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

package faults

import (
	"context"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R7: the manager killed while a rotation's consumer rolls out. The next
// manager follows the rollout from the status, restarts nothing again, and
// still invalidates the previous secret only once the consumer rolled out,
// past the grace period.
func TestRotationWaitsForItsConsumersThroughAKill(t *testing.T) {
	ctx := context.Background()
	w, ms, kc, key := startRotation(t, "faults-r7", "r7-client", "consumed")
	defer ms.stop()
	workloads, err := harness.StartWorkloads(ctx, w.c, w.cluster.ManagerKubeconfig, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(workloads.Stop)
	if err := w.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "default"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	api := harness.ConsumerDeployment("team", "api", "consumed-creds", 75)
	if err := w.c.Create(ctx, api); err != nil {
		t.Fatal(err)
	}
	k := credentialOf(t, w, key)
	k.Spec.Rotation.Consumers = &secretsv1beta1.RotationConsumers{Workloads: []secretsv1beta1.WorkloadReference{{Kind: rollout.KindDeployment, Name: "api"}}}
	if err := w.c.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	before := keycloakSecret(t, kc.realm, "r7-client-00")
	var l ledger
	kc.proxy.OnAnswer(func(r *http.Request, status int) { l.watch(r, status) })
	askRotation(t, w, key, "r7-kill")

	restarted := ""
	for deadline := time.Now().Add(time.Minute); restarted == ""; time.Sleep(200 * time.Millisecond) {
		if rot := credentialOf(t, w, key).Status.Rotation; rot != nil && len(rot.Consumers) == 1 && rot.Consumers[0].RestartedTime != nil {
			if err := w.c.Get(ctx, client.ObjectKeyFromObject(api), api); err != nil {
				t.Fatal(err)
			}
			restarted = api.Spec.Template.Annotations[rollout.RestartedAtAnnotation]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer was not restarted: %+v", credentialOf(t, w, key).Status.Rotation)
		}
	}
	ms.kill()
	time.Sleep(10 * time.Second)
	ms.restartIfDead()

	var rot *secretsv1beta1.RotationStatus
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		if rot = credentialOf(t, w, key).Status.Rotation; rot.Phase == secretsv1beta1.RotationCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotation did not complete: %+v", rot)
		}
	}
	c := rot.Consumers[0]
	if c.State != secretsv1beta1.ConsumerRolledOut || c.FinishedTime == nil {
		t.Fatalf("consumer %+v, want RolledOut", c)
	}
	l.mu.Lock()
	invalidated := append([]time.Time(nil), l.invalidatedAt...)
	l.mu.Unlock()
	// (A pass that read the credential before the cache had the completed
	// rotation asks Keycloak again, which invalidates nothing more: R6.)
	if len(invalidated) == 0 || invalidated[0].Before(c.FinishedTime.Time) || invalidated[0].Before(rot.DistributedTime.Add(time.Minute)) {
		t.Fatalf("previous secret invalidated at %v; want after the rollout finished (%s) and the grace ended (%s)", invalidated, c.FinishedTime, rot.DistributedTime.Add(time.Minute))
	}
	var after appsv1.Deployment
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(api), &after); err != nil {
		t.Fatal(err)
	}
	if got := after.Spec.Template.Annotations[rollout.RestartedAtAnnotation]; got != restarted {
		t.Fatalf("restarted again after the kill: %q, then %q", restarted, got)
	}
	assertOneRotation(t, w, kc, &l, key, "r7-client-00", before, "team", "team2")
}
