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
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vkoctl"
)

// An app team with the shipped editor role only uses kubectl vko as the
// admin does: why and grants work for it (no error, exit 0), show what it
// may see — its resources' conditions and what the operator found of their
// grant — and say plainly that the servers'
// grants are the admin's, without one word of them.
func TestTenantReadsItsGrantsWithThePlugin(t *testing.T) {
	ctx := context.Background()
	a := vaultApp(own, "v-plugin")
	if err := tenant.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	k := credential(own, "k-plugin", appsRealm, "team-a-web")
	if err := tenant.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)

	// A VaultApp on a VaultServer (one that never answers: its grant is
	// what why reads).
	vs := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "plugin-vault-" + own},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: "https://vault.example.com",
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "r"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{own},
				Paths: []vaultv1beta1.VaultPathGrant{{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}}}},
		}}
	if err := op.Client.Create(ctx, vs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Client.Delete(context.Background(), vs) })
	onServer := vaultApp(own, "v-plugin-server")
	onServer.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: vs.Name}
	if err := tenant.Create(ctx, onServer); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Client.Delete(context.Background(), onServer) })

	adminOnly := "only the cluster admin may read"
	for _, tc := range []struct {
		ref  string
		want []string
	}{
		{"vapp/v-plugin", []string{"VaultApp " + own + "/v-plugin", "Ready", "Synced", "Grant:"}},
		{"vapp/v-plugin-server", []string{"VaultApp " + own + "/v-plugin-server", adminOnly + " VaultServer " + vs.Name + " and its grants", "AccessGranted above is what the operator found it covers"}},
		{"kcc/k-plugin", []string{"KeycloakClientCredential " + own + "/k-plugin", "Ready", adminOnly + " KeycloakServer " + server}},
	} {
		var out bytes.Buffer
		if err := vkoctl.Why(ctx, tenant, tc.ref, own, time.Now(), &out); err != nil {
			t.Errorf("kubectl vko why %s as the tenant: %v\n%s", tc.ref, err, out.String())
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("kubectl vko why %s as the tenant lacks %q:\n%s", tc.ref, w, out.String())
			}
		}
		if strings.Contains(out.String(), "clients team-a-web in realms") || strings.Contains(out.String(), "/*: read, list") {
			t.Errorf("kubectl vko why %s shows the tenant a server's grant:\n%s", tc.ref, out.String())
		}
	}

	var out bytes.Buffer
	if err := vkoctl.Grants(ctx, tenant, own, &out); err != nil {
		t.Fatalf("kubectl vko grants as the tenant: %v\n%s", err, out.String())
	}
	for _, w := range []string{adminOnly + " the VaultServers and KeycloakServers", "VaultApp v-plugin", "AccessGranted=True", "KeycloakClientCredential k-plugin"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("kubectl vko grants as the tenant lacks %q:\n%s", w, out.String())
		}
	}
	// The admin still sees the grants themselves.
	out.Reset()
	if err := vkoctl.Grants(ctx, op.Client, own, &out); err != nil || !strings.Contains(out.String(), "KeycloakServer "+server+":") {
		t.Errorf("kubectl vko grants as the admin: %v\n%s", err, out.String())
	}
}
