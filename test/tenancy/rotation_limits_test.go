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

package tenancy

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestRotationLimitsHoldPerClient: the limits that protect a shared
// client's other readers come from Keycloak's record of the client, never
// from the resource that asks. The tenant rotates a client another team
// reads, deletes her credential mid-rotation and creates it again with a
// new request, and makes a second credential asking too: neither
// regenerates the client while the first rotation's previous secret is
// valid for readers not caught up yet, and both say until when. The other
// team's reader logs in every second throughout and never fails.
func TestRotationLimitsHoldPerClient(t *testing.T) {
	ctx := context.Background()
	realm := "flood-" + strings.TrimPrefix(appsRealm, "apps-")
	clientID, serverName := "shared", "kc-"+realm
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The admin's side: a realm whose rotations keep the previous secret an
	// hour, a client in use for a while, the operator's login to the realm
	// and a server that lets the tenant rotate the client another team reads.
	if err := admin.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	if err := admin.RotateWithGrace(ctx, realm, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateClient(ctx, realm, clientID, ""); err != nil {
		t.Fatal(err)
	}
	if err := admin.AgeSecret(ctx, realm, clientID, time.Hour); err != nil {
		t.Fatal(err)
	}
	login, err := admin.CreateOperatorClient(ctx, "vko-"+realm, realm)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "keycloak-" + realm, Namespace: operatorNamespace},
		StringData: map[string]string{"clientId": "vko-" + realm, "clientSecret": login},
	}); err != nil {
		t.Fatal(err)
	}
	if err := op.Client.Create(ctx, &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: serverName},
		Spec: secretsv1beta1.KeycloakServerSpec{
			URL: kc.URL, CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-" + realm},
			AuthType: secretsv1beta1.AuthClientCredentials,
			Access: []secretsv1beta1.AccessGrant{
				{Namespaces: []string{own}, Realms: []string{realm}, ClientIDs: []string{clientID}, Rotate: true},
				{Namespaces: []string{victim}, Realms: []string{realm}, ClientIDs: []string{clientID}},
			},
		},
	}); err != nil {
		t.Fatal(err)
	}
	reading := func(ns, name string) *secretsv1beta1.KeycloakClientCredential {
		k := credential(ns, name, realm, clientID)
		k.Spec.Source.ServerRef.Name = serverName
		k.Spec.Target.Keys = secretsv1beta1.SecretKeys{ClientID: "key", ClientSecret: "secret"}
		return k
	}
	rotating := func(name, request string) *secretsv1beta1.KeycloakClientCredential {
		k := reading(own, name)
		k.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute}}
		k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: request}
		return k
	}

	// The other team's reader, and its workload logging in every second.
	reader := reading(victim, "flood-reader")
	if err := op.Client.Create(ctx, reader); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(reader), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
	var rotated atomic.Value
	rotated.Store("")
	consumer, err := harness.StartConsumer(ctx, harness.ConsumerOptions{Reader: op.Client, KeycloakURL: kc.URL, Realm: realm,
		Secret: client.ObjectKey{Namespace: victim, Name: reader.Spec.Target.SecretName}, PodDelay: 2 * time.Second, Every: time.Second,
		NewSecret: func() string { return rotated.Load().(string) }})
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Stop()

	// The tenant's rotation, granted: the client is regenerated once.
	before := keycloakSecret(t, realm, clientID)
	if err := tenant.Create(ctx, rotating("flood", "r1")); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string { return keycloakSecret(t, realm, clientID) }).WithTimeout(settle).ShouldNot(Equal(before), "the granted rotation never regenerated the client")
	after := keycloakSecret(t, realm, clientID)
	rotated.Store(after)

	// Deleted mid-rotation and created again asking again, and a second
	// credential asking: each waits, saying from when.
	first := &secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Namespace: own, Name: "flood"}}
	if err := tenant.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() bool { return apierrors.IsNotFound(op.Client.Get(ctx, client.ObjectKeyFromObject(first), first)) }).
		WithTimeout(settle).Should(BeTrue(), "the deleted credential is never gone")
	for name, request := range map[string]string{"flood": "r2", "flood-2": "r3"} {
		if err := tenant.Create(ctx, rotating(name, request)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"flood", "flood-2"} {
		NewWithT(t).Eventually(func() string {
			var k secretsv1beta1.KeycloakClientCredential
			if err := op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: name}, &k); err != nil {
				t.Fatal(err)
			}
			if c := meta.FindStatusCondition(k.Status.Conditions, secretsv1beta1.TypeRotationReady); c != nil && c.Reason == secretsv1beta1.ReasonRotationWaiting {
				return c.Message
			}
			return ""
		}).WithTimeout(time.Minute).Should(ContainSubstring(`client "shared" may be rotated again from`), "%s/%s does not say when it may rotate", own, name)
	}
	NewWithT(t).Consistently(func() string { return keycloakSecret(t, realm, clientID) }).WithTimeout(10*time.Second).WithPolling(time.Second).
		Should(Equal(after), "a re-created or second credential regenerated the client again")

	NewWithT(t).Eventually(consumer.UsedNew.Load).WithTimeout(settle).Should(BeTrue(), "the reader never logged in with the rotated secret")
	consumer.Stop()
	if n := consumer.Failures.Load(); n > 0 {
		t.Fatalf("%d of %d logins of the other team's reader failed (the first: %v)", n, consumer.Logins.Load(), consumer.FirstFailure.Load())
	}
	t.Logf("%d logins of the other team's reader, none failed", consumer.Logins.Load())
}
