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
	"os"
	"strings"
	"testing"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// audienceMount is the Kubernetes auth mount of trustedVaultServer.
const audienceMount = "kubernetes-audience"

// TestATokenMintedForAnotherServiceIsRefused: the tenant's workload hands
// a token of its ServiceAccount to another service (its audience); that
// service, or the tenant herself, replays it to Vault at the VaultApp's
// role. The role binds the cluster's own audience (the VaultServer names
// none), so Vault refuses it, and takes the pod's own token.
func TestATokenMintedForAnotherServiceIsRefused(t *testing.T) {
	ctx := context.Background()
	server := trustedVaultServer(t)

	if err := tenant.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: own}}); err != nil {
		t.Fatal(err)
	}
	a := vaultApp(own, "v-audience")
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: server}
	a.Spec.KubernetesAuth.ServiceAccounts = []string{"api"}
	if err := tenant.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	got := waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if got.Status.Vault == nil || got.Status.Vault.Audience == "" {
		t.Fatalf("status.vault %+v names no audience", got.Status.Vault)
	}
	tenantCfg := tenantConfig()
	login := func(audience string) error {
		jwt, err := harness.ServiceAccountTokenFor(ctx, tenantCfg, own, "api", audience)
		if err != nil {
			t.Fatal(err)
		}
		anonymous, err := vaultapi.NewClient(&vaultapi.Config{Address: vault.Addr})
		if err != nil {
			t.Fatal(err)
		}
		anonymous.ClearToken()
		secret, err := anonymous.Logical().Write("auth/"+audienceMount+"/login", map[string]any{"role": got.Status.Vault.Role, "jwt": jwt})
		if err == nil {
			harness.KeepSecret(secret.Auth.ClientToken)
		}
		return err
	}
	if err := login("other-service"); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("a token minted for another service: %v; want refused on its audience", err)
	}
	if err := login(""); err != nil {
		t.Fatalf("the pod's own token (the cluster's audience): %v", err)
	}
}

// trustedVaultServer is the admin's VaultServer on the suite's Vault, the
// operator logging in through Kubernetes auth as the README sets it up,
// granting the tenant's namespace its KV prefix. Its auth mount is its own:
// on the environment's mount it would be the environment Vault's twin, and
// the other tests' VaultApps would move to it.
func trustedVaultServer(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	const account = "controller-manager"
	if err := op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account, Namespace: operatorNamespace}}); err != nil {
		t.Fatal(err)
	}
	token, err := harness.ServiceAccountToken(ctx, op.Config, operatorNamespace, account)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(operatorTokenPath, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := vault.ConfigureKubernetesAuthAt(ctx, audienceMount, op.Client, op.Config); err != nil {
		t.Fatal(err)
	}
	policy := strings.ReplaceAll(harness.OperatorVaultPolicy, "auth/kubernetes/", "auth/"+audienceMount+"/")
	if err := vault.AllowOperatorAt(ctx, audienceMount, "vault-keycloak-operator-"+audienceMount, policy, operatorNamespace, account); err != nil {
		t.Fatal(err)
	}
	name := "trusted-vault-" + own
	if err := op.Client.Create(ctx, &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: vault.Addr,
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: audienceMount, Role: "vault-keycloak-operator"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: audienceMount}}},
			Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{own},
				Paths: []vaultv1beta1.VaultPathGrant{{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}}}},
		}}); err != nil {
		t.Fatal(err)
	}
	harness.WaitCondition(t, op, client.ObjectKey{Name: name}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
		vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, settle)
	return name
}
