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

package multicluster_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// One JWT mount trusted by two clusters: a subject such as
// system:serviceaccount:shop:api is the same in both, so each cluster's app
// roles bind its issuer too (the default, told from the operator's own
// token). B's workload is refused at A's role and logs in at its own; an
// issuer taken out of a role by hand comes back.
func TestOneJWTMountTrustedByTwoClusters(t *testing.T) {
	ctx := context.Background()
	const mount, audience = "jwt-shared", "apps.vault.example.com"
	a, b := startCluster(t, "jwta", "ja"), startCluster(t, "jwtb", "jb")
	if err := vaultServer.ConfigureJWTAuthAt(ctx, mount, a.op.Config, b.op.Config); err != nil {
		t.Fatal(err)
	}
	issuers := map[string]string{}
	for _, c := range []struct {
		*cluster
		prefix string
	}{{a, "ja"}, {b, "jb"}} {
		// The operator logs in through its own Kubernetes mount and writes
		// its app roles to the shared JWT mount: the README's JWT policy.
		if err := vaultServer.AllowOperatorAt(ctx, c.mount, "vault-keycloak-operator-"+c.name, harness.OperatorVaultJWTPolicyFor(mount, c.prefix),
			operatorNamespace, operatorAccount); err != nil {
			t.Fatal(err)
		}
		s := vaultServerAt("shared", vaultServer.Addr, c.mount)
		s.Spec.AppAuth = vaultv1beta1.VaultAuthMethod{JWT: &vaultv1beta1.VaultJWTAuthMount{
			VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: mount}, Audience: audience}}
		s.Spec.Cluster, s.Spec.NamePrefix = c.name, c.prefix
		s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}}
		if err := c.op.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		server := c.waitServer(t, "shared", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
		issuers[c.name] = issuerOf(t, workloadToken(t, c.cluster, operatorNamespace, operatorAccount, ""))
		if server.Status.AppAuthIssuer != issuers[c.name] {
			t.Fatalf("%s: status.appAuthIssuer %q, want this cluster's issuer %q", c.name, server.Status.AppAuthIssuer, issuers[c.name])
		}
		c.namespace(t, "shop")
		if err := c.op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}}); err != nil {
			t.Fatal(err)
		}
		app := &vaultv1beta1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
			Spec: vaultv1beta1.VaultAppSpec{
				ServerRef:      &vaultv1beta1.ServerReference{Name: "shared"},
				Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "api/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
				KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"api"}},
			},
		}
		if err := c.op.Client.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
		c.wait(t, client.ObjectKeyFromObject(app), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	}
	if issuers["jwta"] == issuers["jwtb"] {
		t.Fatalf("both clusters issue tokens as %q: the test cannot tell them apart", issuers["jwta"])
	}

	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	role, err := admin.Logical().Read("auth/" + mount + "/role/app-ja.shop.api")
	if err != nil || role == nil {
		t.Fatalf("read A's role: %v %v", role, err)
	}
	NewWithT(t).Expect(role.Data["bound_claims"]).To(HaveKeyWithValue("iss", BeElementOf(issuers["jwta"], []any{issuers["jwta"]})))

	login := func(from *cluster, role string) error {
		t.Helper()
		jwt := workloadToken(t, from, "shop", "api", audience)
		got, err := unauthenticated(t).Logical().Write("auth/"+mount+"/login", map[string]any{"role": role, "jwt": jwt})
		if err == nil {
			harness.KeepSecret(got.Auth.ClientToken)
		}
		return err
	}
	if err := login(a, "app-ja.shop.api"); err != nil {
		t.Fatalf("A's workload at A's role: %v", err)
	}
	if err := login(b, "app-jb.shop.api"); err != nil {
		t.Fatalf("B's workload at B's role: %v", err)
	}
	if err := login(b, "app-ja.shop.api"); err == nil || !strings.Contains(err.Error(), "claim") {
		t.Fatalf("B's workload, of the same subject, at A's role: %v; want refused on its claims", err)
	}

	// The issuer taken out of A's role by hand is drift, repaired.
	if _, err := admin.Logical().Write("auth/"+mount+"/role/app-ja.shop.api", map[string]any{
		"role_type": "jwt", "user_claim": "sub", "bound_audiences": []string{audience}, "bound_claims_type": "string",
		"bound_claims": map[string]any{"sub": []string{"system:serviceaccount:shop:api"}}, "token_policies": "app-ja.shop.api",
	}); err != nil {
		t.Fatal(err)
	}
	if err := login(b, "app-ja.shop.api"); err != nil {
		t.Fatalf("the control: with the issuer taken out, B's workload logs in at A's role (%v)", err)
	}
	var app vaultv1beta1.VaultApp
	key := client.ObjectKey{Namespace: "shop", Name: "api"}
	if err := a.op.Client.Get(ctx, key, &app); err != nil {
		t.Fatal(err)
	}
	app.Spec.RefreshInterval = &metav1.Duration{Duration: 30 * time.Second}
	if err := a.op.Client.Update(ctx, &app); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() error {
		if err := login(b, "app-ja.shop.api"); err == nil {
			return fmt.Errorf("B's workload still logs in at A's role")
		}
		return nil
	})
}

// workloadToken is a token of a ServiceAccount of the cluster, for the
// audience ("" the API server's).
func workloadToken(t *testing.T, c *cluster, namespace, name, audience string) string {
	t.Helper()
	jwt, err := harness.ServiceAccountTokenFor(context.Background(), c.op.Config, namespace, name, audience)
	if err != nil {
		t.Fatal(err)
	}
	return jwt
}

// issuerOf reads a token's iss claim (not verified: the test asked for it).
func issuerOf(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatal("not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Iss string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.Iss
}
