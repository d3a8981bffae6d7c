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

package vaultapp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// TestOperatorLogsInThroughKubernetesAuthOnce is the in-cluster path: no
// VAULT_TOKEN, the operator's ServiceAccount token, the role the README
// describes. Many calls make one login; a token revoked behind its back
// makes one more, not an error.
func TestOperatorLogsInThroughKubernetesAuthOnce(t *testing.T) {
	ctx := context.Background()
	const ns, sa = "vko-login", "vault-keycloak-operator-controller-manager"
	if err := op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := vaultServer.AllowOperator(ctx, ns, sa); err != nil {
		t.Fatal(err)
	}
	jwt, err := serviceAccountToken(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte(jwt), 0o600); err != nil {
		t.Fatal(err)
	}

	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token, cfg.ServiceAccountTokenPath = vaultServer.Addr, "", tokenPath
	c, err := vaultclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	logins, lookups := vaultclient.RequestCount(vaultclient.OpLogin), vaultclient.RequestCount(vaultclient.OpLookupSelf)
	const name = "app.vko-login.probe"
	for range 5 {
		if err := c.WritePolicy(ctx, name, `path "secret/data/vko-login/*" { capabilities = ["read"] }`); err != nil {
			t.Fatalf("write policy as the operator: %v", err)
		}
		if _, found, err := c.ReadPolicy(ctx, name); err != nil || !found {
			t.Fatalf("read policy as the operator: found=%v err=%v", found, err)
		}
	}
	if got := vaultclient.RequestCount(vaultclient.OpLogin) - logins; got != 1 {
		t.Fatalf("%v logins for 10 calls, want 1", got)
	}

	// Outside its policy, the operator is refused.
	if err := c.WritePolicy(ctx, "root-like", `path "*" { capabilities = ["sudo"] }`); err == nil {
		t.Fatal("the operator wrote a policy outside app.*")
	}

	// The parameter constraints: roles named app.* that hand out app.*
	// policies only, with the four parameters the operator writes.
	asOperator, err := vaultapi.NewClient(&vaultapi.Config{Address: vaultServer.Addr})
	if err != nil {
		t.Fatal(err)
	}
	asOperator.SetToken("")
	login, err := asOperator.Logical().WriteWithContext(ctx, "auth/kubernetes/login", map[string]any{"role": "vault-keycloak-operator", "jwt": jwt})
	if err != nil {
		t.Fatal(err)
	}
	asOperator.SetToken(login.Auth.ClientToken)
	// The README's role keeps Vault's default policy off the token: Vault
	// would parse that templated policy again on every request.
	if slices.Contains(login.Auth.Policies, "default") {
		t.Errorf("the operator's token carries Vault's default policy: %v", login.Auth.Policies)
	}
	// Vault's answer to a valid token its policy refuses does not say
	// "invalid token" (that answer, below, is a revoked token's).
	err = asOperator.Sys().PutPolicyWithContext(ctx, "root-like", `path "*" { capabilities = ["sudo"] }`)
	var refused *vaultapi.ResponseError
	if !errors.As(err, &refused) || refused.StatusCode != 403 || strings.Contains(strings.Join(refused.Errors, " "), "invalid token") {
		t.Fatalf("Vault's answer to a write outside the operator's policy: %v, want a 403 without \"invalid token\"", err)
	}
	role := func(params map[string]any) error {
		_, err := asOperator.Logical().WriteWithContext(ctx, "auth/kubernetes/role/app.vko-login.probe", params)
		return err
	}
	// token_policies as one string, as the operator writes it: OpenBao
	// refuses a list against the policy's allowed_parameters glob.
	base := func() map[string]any {
		return map[string]any{"bound_service_account_names": []string{"probe"}, "bound_service_account_namespaces": []string{ns},
			"token_policies": name, "token_ttl": 60}
	}
	if err := role(base()); err != nil {
		t.Fatalf("the operator could not write an app.* role: %v", err)
	}
	for what, mutate := range map[string]func(map[string]any){
		"token_policies outside app.*":  func(p map[string]any) { p["token_policies"] = []string{name, "root"} },
		"a second policy in one string": func(p map[string]any) { p["token_policies"] = name + ",root" },
		"the deprecated policies alias": func(p map[string]any) { delete(p, "token_policies"); p["policies"] = []string{"default-admin"} },
		"a parameter it never writes":   func(p map[string]any) { p["token_no_default_policy"] = false; p["audience"] = "x" },
	} {
		p := base()
		mutate(p)
		if err := role(p); err == nil {
			t.Errorf("the operator's policy let it write a role with %s", what)
		}
	}
	if _, err := asOperator.Logical().WriteWithContext(ctx, "auth/kubernetes/role/admin-role", base()); err == nil {
		t.Error("the operator wrote a role outside app.*")
	}
	if names, err := c.ListPolicies(ctx, "app."); err != nil || !slices.Contains(names, name) {
		t.Fatalf("list policies as the operator (the orphan sweep): %v %v", names, err)
	}

	// Every token issued through the login path is revoked by an admin.
	if _, err := admin.Logical().Write("sys/leases/revoke-prefix/auth/kubernetes/login", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadPolicy(ctx, name); err != nil {
		t.Fatalf("after the token was revoked: %v", err)
	}
	// The refused write above is a policy's answer: the token was looked up
	// (the README's policy lets it, without Vault's default policy) and
	// found valid, and no login followed. The refused read after the
	// revocation was Vault's "invalid token": one login, no lookup.
	if got := vaultclient.RequestCount(vaultclient.OpLogin) - logins; got != 2 {
		t.Fatalf("%v logins in all, want 2 (first, after revocation; none after the policy's refusal)", got)
	}
	// OpenBao answers a revoked token as it answers a policy's refusal
	// ("permission denied", no "invalid token"): the client asks whether
	// its token is gone before it logs in again, one lookup more.
	wantLookups := 1.0
	if vaultServer.Product() == "OpenBao" {
		wantLookups = 2
	}
	if got := vaultclient.RequestCount(vaultclient.OpLookupSelf) - lookups; got != wantLookups {
		t.Fatalf("%v token lookups in all on %s, want %v: the policy's refusal looks the token up before deciding not to log in, the revoked token's answer needs none where it says \"invalid token\"", got, vaultServer.Product(), wantLookups)
	}
	// What the client tells a revoked token by (its unit tests count the
	// requests): the server's own answer to it.
	_, err = asOperator.Sys().GetPolicyWithContext(ctx, name)
	saysInvalid := errors.As(err, &refused) && strings.Contains(strings.Join(refused.Errors, " "), "invalid token")
	if !errors.As(err, &refused) || refused.StatusCode != 403 || saysInvalid != (wantLookups == 1) {
		t.Fatalf("%s's answer to a revoked token: %v, want a 403 (saying \"invalid token\": %v)", vaultServer.Product(), err, wantLookups == 1)
	}
}
