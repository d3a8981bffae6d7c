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
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestARotationInAnotherClusterReachesThisClustersReaders: two clusters,
// each with its operator, read one Keycloak client; cluster A rotates it
// with a one-minute grace, cluster B's credential refreshes every ten
// minutes. B's readers learn of the new secret from the realm's admin
// events within seconds, long before A ends the grace: a consumer of B's
// Secret logs in throughout with no failure.
func TestARotationInAnotherClusterReachesThisClustersReaders(t *testing.T) {
	ctx := context.Background()
	realmName := realmRotatingWithGrace(t, "clusters")
	clientID := fmt.Sprintf("shared-%04d", clientSeq.Add(1))
	if err := createClient(ctx, kc, realmName, clientID, ""); err != nil {
		t.Fatal(err)
	}

	// Cluster A: this suite's, rotating.
	nsA := op.NewNamespace(t, nil)
	rotating := credential(nsA, "app", newServerInRealm(t, kc, realmName, nsA), clientID)
	rotating.Spec.Source.Realm = realmName
	rotating.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	rotating.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute}}
	if err := op.Client.Create(ctx, rotating); err != nil {
		t.Fatal(err)
	}
	keyA := client.ObjectKeyFromObject(rotating)
	waitCredential(t, keyA, secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)

	// Cluster B: its own API server and operator, the same Keycloak.
	b, err := harness.StartOperator(manager.Options{OperatorNamespace: operatorNamespace, MaxBackoff: testMaxBackoff, MaxConcurrentReconciles: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	nsB := "readers"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsB}},
	} {
		if err := b.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var login corev1.Secret
	if err := op.Client.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorCredentials(t, kc, "cluster-b", realmName)}, &login); err != nil {
		t.Fatal(err)
	}
	if err := b.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "keycloak-login"}, Data: login.Data}); err != nil {
		t.Fatal(err)
	}
	if err := b.Client.Create(ctx, &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "keycloak"},
		Spec: secretsv1beta1.KeycloakServerSpec{URL: kc.URL, AuthType: secretsv1beta1.AuthClientCredentials,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-login"},
			Access:               []secretsv1beta1.AccessGrant{{Namespaces: []string{nsB}, Realms: []string{realmName}, ClientIDs: []string{clientID}}}},
	}); err != nil {
		t.Fatal(err)
	}
	reading := credential(nsB, "reader", "keycloak", clientID)
	reading.Spec.Source.Realm = realmName
	reading.Spec.RefreshInterval = &metav1.Duration{Duration: 10 * time.Minute}
	if err := b.Client.Create(ctx, reading); err != nil {
		t.Fatal(err)
	}
	harness.WaitCondition(t, b, client.ObjectKeyFromObject(reading), func(k *secretsv1beta1.KeycloakClientCredential) []metav1.Condition { return k.Status.Conditions },
		secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)

	var after atomic.Value
	consumer, err := harness.StartConsumer(ctx, harness.ConsumerOptions{
		Reader: b.Client, KeycloakURL: kc.URL, Realm: realmName, Secret: client.ObjectKey{Namespace: nsB, Name: "reader-creds"},
		PodDelay: podDelay, Every: 500 * time.Millisecond,
		NewSecret: func() string { s, _ := after.Load().(string); return s },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()
	// B watches a realm from its first read of the realm's events after a
	// credential there appears (within a period); the consumer logs in
	// with the first secret meanwhile.
	time.Sleep(manager.DefaultKeycloakEventsEvery + 2*time.Second)

	changeCredential(t, keyA, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "clusters-1"}
	})
	NewWithT(t).Eventually(phaseOf(t, keyA)).WithTimeout(30 * time.Second).Should(Equal(secretsv1beta1.RotationGracePeriod))
	rotated := rotationOf(t, keyA).DistributedTime.Time
	newSecret, err := clientSecretOf(ctx, kc, realmName, clientID)
	if err != nil {
		t.Fatal(err)
	}
	after.Store(newSecret)
	// B's Secret holds it within seconds: well inside the grace.
	NewWithT(t).Eventually(func() bool { // a bool: no secret in a failure's message
		var s corev1.Secret
		return b.Client.Get(ctx, client.ObjectKey{Namespace: nsB, Name: "reader-creds"}, &s) == nil && string(s.Data["secret"]) == newSecret
	}).WithTimeout(30*time.Second).WithPolling(time.Second).Should(BeTrue(), "cluster B's Secret was not brought the new secret")
	t.Logf("cluster B's Secret held the new secret %s after cluster A distributed it", time.Since(rotated).Round(time.Second))

	// A ends the grace; B's consumer, on the new secret by then, never fails.
	NewWithT(t).Eventually(phaseOf(t, keyA)).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Equal(secretsv1beta1.RotationCompleted))
	time.Sleep(3 * time.Second) // logins after the previous secret ended
	consumer.Stop()
	if consumer.Failures.Load() != 0 || !consumer.UsedNew.Load() {
		t.Fatalf("cluster B's consumer: %d failed logins of %d (used the new secret: %v); want none", consumer.Failures.Load(), consumer.Logins.Load(), consumer.UsedNew.Load())
	}
	t.Logf("cluster B's consumer: %d logins through A's rotation, none failed", consumer.Logins.Load())
}
