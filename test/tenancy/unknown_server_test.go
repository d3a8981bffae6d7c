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
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestAServerThatGrantsNothingAnswersAsAMissingOne: the tenant names a
// KeycloakServer that exists and grants her namespace nothing, and one that
// does not exist. The warning at creation, the status, and the refusal of a
// rotation request read the same for both, the name aside: she learns of no
// server she may not use.
func TestAServerThatGrantsNothingAnswersAsAMissingOne(t *testing.T) {
	ctx := context.Background()
	quiet := "kc-quiet-" + appsRealm
	if err := op.Client.Create(ctx, &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: quiet},
		Spec: secretsv1beta1.KeycloakServerSpec{URL: kc.URL, CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-login"},
			AuthType: secretsv1beta1.AuthClientCredentials,
			Access:   []secretsv1beta1.AccessGrant{{Namespaces: []string{victim}, Realms: []string{appsRealm}, ClientIDs: []string{"*"}, Rotate: true}}},
	}); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for name, server := range map[string]string{"k-quiet": quiet, "k-missing": "kc-missing-" + appsRealm} {
		as, warned := tenantWarned(t)
		k := credential(own, name, appsRealm, "team-a-web")
		k.Spec.Source.ServerRef.Name = server
		if err := as.Create(ctx, k); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonServerNotFound)
		status := meta.FindStatusCondition(got.Status.Conditions, secretsv1beta1.TypeReady).Message
		refused := update(ctx, k, func() { k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"} })
		if refused == nil {
			t.Fatalf("%s: a rotation request was admitted", name)
		}
		answers[name] = strings.ReplaceAll(strings.ReplaceAll(strings.Join(warned.All(), "; ")+" | "+status+" | "+refused.Error(), server, "SERVER"), name, "NAME")
	}
	if answers["k-quiet"] != answers["k-missing"] {
		t.Fatalf("a server that grants nothing answers\n%s\nand a missing one\n%s", answers["k-quiet"], answers["k-missing"])
	}
	t.Logf("both answer: %s", answers["k-quiet"])
}

// TestAVaultServerThatGrantsNothingAnswersAsAMissingOne: the same for a
// VaultApp naming a VaultServer that lists only another namespace, and one
// naming a VaultServer that does not exist: both admitted with one warning,
// both ServerNotFound with one message, nothing written to Vault.
func TestAVaultServerThatGrantsNothingAnswersAsAMissingOne(t *testing.T) {
	ctx := context.Background()
	victims := "victims-vault-" + victim
	if err := op.Client.Create(ctx, &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: victims},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: "https://vault.example.com",
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "r"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			Access:  []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{victim}}},
		}}); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{}
	for name, server := range map[string]string{"v-quiet": victims, "v-missing": "missing-vault-" + victim} {
		as, warned := tenantWarned(t)
		a := vaultApp(own, name)
		a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: server}
		if err := as.Create(ctx, a); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound)
		status := meta.FindStatusCondition(got.Status.Conditions, vaultv1beta1.TypeReady).Message
		if got.Status.Vault != nil || policy(t, policyName(own, name)) != "" {
			t.Fatalf("%s: status.vault %+v, or a policy written", name, got.Status.Vault)
		}
		answers[name] = strings.ReplaceAll(strings.ReplaceAll(strings.Join(warned.All(), "; ")+" | "+status, server, "SERVER"), name, "NAME")
	}
	if answers["v-quiet"] != answers["v-missing"] || !strings.Contains(answers["v-quiet"], "does not exist or grants namespace") {
		t.Fatalf("a server that grants nothing answers\n%s\nand a missing one\n%s", answers["v-quiet"], answers["v-missing"])
	}
	t.Logf("both answer: %s", answers["v-quiet"])
}

// tenantWarned is the tenant's client, impersonated, with the API server's
// warnings to its requests collected.
func tenantWarned(t *testing.T) (client.Client, *harness.Warnings) {
	t.Helper()
	warned := &harness.Warnings{}
	cfg := tenantConfig()
	cfg.WarningHandler = warned
	as, err := client.New(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return as, warned
}
