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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// settle is how long an inert attempt is watched for a change that must
// not come, and how long a wait for the operator's answer may take.
const (
	settle = 20 * time.Second
)

func credential(ns, name, realm, clientID string) *secretsv1beta1.KeycloakClientCredential {
	return &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source:          secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: server}, Realm: realm, ClientID: clientID},
			Target:          secretsv1beta1.TargetSpec{SecretName: name + "-creds", Keys: secretsv1beta1.SecretKeys{ClientID: "id", ClientSecret: "secret"}},
			RefreshInterval: &metav1.Duration{Duration: 30 * time.Second},
		},
	}
}

func vaultApp(ns, name string, caps ...vaultv1beta1.Capability) *vaultv1beta1.VaultApp {
	if len(caps) == 0 {
		caps = []vaultv1beta1.Capability{"read", "list"}
	}
	return &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy:          vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: caps}}},
			RefreshInterval: &metav1.Duration{Duration: 30 * time.Second},
		},
	}
}

func waitCredential(t *testing.T, key client.ObjectKey, typ string, status metav1.ConditionStatus, reason string) *secretsv1beta1.KeycloakClientCredential {
	t.Helper()
	return harness.WaitCondition(t, op, key, func(k *secretsv1beta1.KeycloakClientCredential) []metav1.Condition { return k.Status.Conditions },
		typ, status, reason, settle)
}

func waitApp(t *testing.T, key client.ObjectKey, typ string, status metav1.ConditionStatus, reason string) *vaultv1beta1.VaultApp {
	t.Helper()
	return harness.WaitCondition(t, op, key, func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions },
		typ, status, reason, settle)
}

// keycloakSecret is the client's secret as Keycloak holds it.
func keycloakSecret(t *testing.T, realm, clientID string) string {
	t.Helper()
	a, err := kc.Admin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.ClientSecret(context.Background(), realm, clientID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// policy is the text of a Vault policy, "" when there is none.
func policy(t *testing.T, name string) string {
	t.Helper()
	text, err := vaultAdmin.Sys().GetPolicy(name)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// role is a Kubernetes-auth role's data, nil when there is none.
func role(t *testing.T, name string) map[string]any {
	t.Helper()
	s, err := vaultAdmin.Logical().Read("auth/kubernetes/role/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return nil
	}
	return s.Data
}

// noSecret asserts that no Secret of that name appears in ns for a while.
func noSecret(t *testing.T, ns, name string) {
	t.Helper()
	NewWithT(t).Consistently(func() bool {
		err := op.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		return apierrors.IsNotFound(err)
	}).WithTimeout(3*time.Second).WithPolling(300*time.Millisecond).Should(BeTrue(), "Secret %s/%s was written", ns, name)
}

func policyName(ns, name string) string { return tenancy.PolicyName("", ns, name) }

// setNamespaceAnnotation is the cluster admin changing a grant.
func setNamespaceAnnotation(t *testing.T, ns, key, value string) {
	t.Helper()
	var n corev1.Namespace
	if err := op.Client.Get(context.Background(), client.ObjectKey{Name: ns}, &n); err != nil {
		t.Fatal(err)
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	if value == "" {
		delete(n.Annotations, key)
	} else {
		n.Annotations[key] = value
	}
	if err := op.Client.Update(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
}
