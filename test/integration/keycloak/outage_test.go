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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestKeycloakOutageIsReportedAndRecovered stops a Keycloak of the test's
// own (the shared one serves the other tests) and starts it again.
func TestKeycloakOutageIsReportedAndRecovered(t *testing.T) {
	ctx := context.Background()
	logDir := t.TempDir()
	own, err := harness.StartKeycloak(ctx, logDir)
	if err != nil {
		t.Fatalf("start a Keycloak for this test: %v", err)
	}
	t.Cleanup(own.Stop)
	ownRealm := "outage"
	if err := createRealm(ctx, own, ownRealm); err != nil {
		t.Fatal(err)
	}
	if err := createClient(ctx, own, ownRealm, "app", ""); err != nil {
		t.Fatal(err)
	}

	ns := op.NewNamespace(t, nil)
	server := newServerInRealm(t, own, ownRealm, ns)
	waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, readyWithin)
	kcc := credential(ns, "app", server, "app")
	kcc.Spec.Source.Realm = ownRealm
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	good := secretOf(t, ns, "app-creds").Data
	logins := keycloak.RequestCount(server, keycloak.OpLogin)
	NewWithT(t).Expect(logins).To(Equal(1.0), "one login for the KeycloakServer and its credential together")

	own.Stop()
	// A refresh while Keycloak is down (the spec change forces one now).
	touch(t, kcc)
	got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonKeycloakUnavailable, readyWithin)
	NewWithT(t).Expect(got.Status.Conditions).To(ContainElement(HaveField("Message", ContainSubstring("connection refused"))))
	NewWithT(t).Expect(secretOf(t, ns, "app-creds").Data).To(Equal(good), "the last good Secret stays in place")
	op.WaitEvent(t, ns, "app", secretsv1beta1.ReasonKeycloakUnavailable)

	// Keycloak returns, empty as a dev server is: the admin re-creates the
	// realm and client, which gets a new secret; the operator logs in again
	// and propagates it.
	if err := own.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := createRealm(ctx, own, ownRealm); err != nil {
		t.Fatal(err)
	}
	if err := createClient(ctx, own, ownRealm, "app", ""); err != nil {
		t.Fatal(err)
	}
	operatorCredentials(t, own, server, ownRealm) // the operator's client, restored
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	want, err := clientSecretOf(ctx, own, ownRealm, "app")
	if err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(string(secretOf(t, ns, "app-creds").Data["secret"])).To(Equal(want))
}

func TestWrongCredentialsAreReportedClearly(t *testing.T) {
	ctx := context.Background()
	if err := op.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "wrong-password", Namespace: operatorNamespace},
		StringData: map[string]string{"clientId": operatorClient, "clientSecret": "not-the-secret"},
	}); err != nil {
		t.Fatal(err)
	}
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	s := waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, readyWithin)
	useCredentials(t, s, "wrong-password")
	got := waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionFalse, secretsv1beta1.ReasonUnauthorized, readyWithin)
	NewWithT(t).Expect(got.Status.Conditions[0].Message).To(ContainSubstring("credentials refused"))

	kcc := credential(ns, "app", server, newClientID(t, ""))
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonUnauthorized, readyWithin)

	// A credentials Secret that lacks a key says which.
	useCredentials(t, s, "no-such-secret")
	got = waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionFalse, secretsv1beta1.ReasonCredentialsInvalid, readyWithin)
	NewWithT(t).Expect(got.Status.Conditions[0].Message).To(ContainSubstring("Secret vko-system/no-such-secret not found in the operator's namespace"))
}

// An admin who edits, deletes or restores a credentials Secret sees its
// KeycloakServer checked at once: nothing else would reconcile a Connected
// server before its next check, five minutes away.
func TestCredentialsSecretChangesAreSeenAtOnce(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	s := waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, readyWithin)
	var good corev1.Secret
	if err := op.Client.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: s.Spec.CredentialsSecretRef.Name}, &good); err != nil {
		t.Fatal(err)
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rotating", Namespace: operatorNamespace}, Data: good.Data}
	if err := op.Client.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	useCredentials(t, s, "rotating")
	waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, readyWithin)

	creds.StringData = map[string]string{"clientSecret": "not-the-secret"}
	if err := op.Client.Update(ctx, creds); err != nil {
		t.Fatal(err)
	}
	waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionFalse, secretsv1beta1.ReasonUnauthorized, readyWithin)

	if err := op.Client.Delete(ctx, creds); err != nil {
		t.Fatal(err)
	}
	waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionFalse, secretsv1beta1.ReasonCredentialsInvalid, readyWithin)

	restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rotating", Namespace: operatorNamespace}, Data: good.Data}
	if err := op.Client.Create(ctx, restored); err != nil {
		t.Fatal(err)
	}
	waitServer(t, server, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, readyWithin)
}

// useCredentials points a KeycloakServer at another credentials Secret.
func useCredentials(t *testing.T, s *secretsv1beta1.KeycloakServer, secret string) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"credentialsSecretRef":{"name":"`+secret+`"}}}`))
	if err := op.Client.Patch(context.Background(), s, patch); err != nil {
		t.Fatal(err)
	}
}

// touch changes the spec so that the resource is reconciled now.
func touch(t *testing.T, obj client.Object) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"refreshInterval":"31s"}}`))
	if err := op.Client.Patch(context.Background(), obj, patch); err != nil {
		t.Fatal(err)
	}
}
