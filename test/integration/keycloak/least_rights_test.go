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

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// A KeycloakServer that grants a realm where the operator's client holds
// no role: Keycloak refuses the read (403), and the credential says
// OperatorForbidden, naming the KeycloakServer whose client the admin must
// grant; no Secret is written.
func TestARealmWithoutTheOperatorsRolesNamesTheAdminsFix(t *testing.T) {
	ctx := context.Background()
	denied := fmt.Sprintf("denied-%04d", rand.IntN(10000))
	if err := createRealm(ctx, kc, denied); err != nil {
		t.Fatal(err)
	}
	if err := createClient(ctx, kc, denied, "app", ""); err != nil {
		t.Fatal(err)
	}
	ns := op.NewNamespace(t, nil)
	name := fmt.Sprintf("kc-%04d", serverSeq.Add(1))
	server := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: secretsv1beta1.KeycloakServerSpec{
			URL:      kc.URL,
			AuthType: secretsv1beta1.AuthClientCredentials,
			// The operator's roles are in the suite's realm only.
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: operatorCredentials(t, kc, name, realm)},
			Access:               []secretsv1beta1.AccessGrant{{Namespaces: []string{ns}, Realms: []string{denied}, ClientIDs: []string{"*"}}},
		},
	}
	if err := op.Client.Create(ctx, server); err != nil {
		t.Fatal(err)
	}
	kcc := credential(ns, "app", name, "app")
	kcc.Spec.Source.Realm = denied
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonOperatorForbidden, readyWithin)
	NewWithT(t).Expect(got.Status.Conditions).To(ContainElement(HaveField("Message",
		ContainSubstring("the client in KeycloakServer "+name+"'s credentials lacks a realm-management role"))))
	op.WaitEvent(t, ns, "app", secretsv1beta1.ReasonOperatorForbidden)
	var s corev1.Secret
	if err := op.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-creds"}, &s); !apierrors.IsNotFound(err) {
		t.Fatalf("Secret app-creds written without the right to read the client (%v)", err)
	}
}
