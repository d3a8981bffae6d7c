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

package olm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The operator's identity as docs/admin-setup.md names it.
const (
	docOperatorNamespace = "vault-keycloak-operator"
	docOperatorAccount   = "vault-keycloak-operator-controller-manager"
)

// TestAdminSetupAsWritten runs the shell blocks of docs/admin-setup.md as
// an admin types them, against this cluster, a Vault of its own and the
// run's Keycloak; the test fills in only what the page says comes from
// the admin's own cluster (the in-cluster Vault's view of the API server,
// the ServiceAccount signing key copied from a control plane). Then it
// uses what each block set up as the operator does, with the operator's
// ServiceAccount: its Vault logins (Kubernetes and JWT) write what the
// policies allow and are refused the rest, and its Keycloak client reads
// what the roles allow and nothing beyond.
func TestAdminSetupAsWritten(t *testing.T) {
	blocks := docBlocks(t, "docs/admin-setup.md")
	e := newEnv(t)
	ctx := context.Background()

	// What the admin has before this page: the operator installed (its
	// namespace and ServiceAccount), the realms it names, a client.
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: docOperatorNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: docOperatorAccount, Namespace: docOperatorNamespace}},
	} {
		if err := e.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	kcAdmin := forgetDocKeycloak(t, e.keycloak, "apps", "shop")
	for _, realm := range []string{"apps", "shop"} {
		if err := kcAdmin.CreateRealm(ctx, realm); err != nil {
			t.Fatal(err)
		}
	}
	if err := kcAdmin.CreateClient(ctx, "shop", "shop-web", ""); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	shell := e.docShell(t, dir)
	// A Vault inside the cluster reaches the API server at
	// kubernetes.default.svc with its own pod's token and CA; this one is
	// outside, and is given what the quick start gives such a Vault.
	reviewerToken := e.vaultReviewer(t)
	ca := filepath.Join(dir, ".kube-ca.crt")
	if err := os.WriteFile(ca, e.cluster.Config.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := harness.ClusterPublicKeys(ctx, e.cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	signingKey := filepath.Join(dir, ".sa.pub")
	if err := os.WriteFile(signingKey, []byte(strings.Join(keys, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	shell.Placeholders = map[string]string{
		"kubernetes_host=https://kubernetes.default.svc": "kubernetes_host=" + e.cluster.Config.Host + " kubernetes_ca_cert=@" + ca +
			" disable_local_ca_jwt=true token_reviewer_jwt=" + reviewerToken,
		"scp control-plane:/etc/kubernetes/pki/sa.pub": "cp " + signingKey,
	}
	runBlocks(t, e, shell, blocks, nil)

	vc := func(t *testing.T, loginPath, jwt string) *vaultapi.Client {
		t.Helper()
		cfg := vaultapi.DefaultConfig()
		cfg.Address = e.vault.Addr
		c, err := vaultapi.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.ClearToken()
		login, err := c.Logical().WriteWithContext(ctx, loginPath, map[string]any{"role": "vault-keycloak-operator", "jwt": jwt})
		if err != nil || login == nil || login.Auth == nil {
			t.Fatalf("the operator logs in at %s: %v", loginPath, err)
		}
		harness.KeepSecret(login.Auth.ClientToken)
		c.SetToken(login.Auth.ClientToken)
		return c
	}
	mayWrite := func(t *testing.T, c *vaultapi.Client, path string, body map[string]any, allowed bool) {
		t.Helper()
		_, err := c.Logical().WriteWithContext(ctx, path, body)
		if allowed && err != nil {
			t.Errorf("the operator may not write %s: %v", path, err)
		}
		if !allowed && (err == nil || !strings.Contains(err.Error(), "permission denied")) {
			t.Errorf("the operator writes %s, which its policy must refuse (%v)", path, err)
		}
	}
	policy := map[string]any{"policy": `path "secret/data/shop/*" { capabilities = ["read"] }`}

	t.Run("the Kubernetes login writes app.* and nothing else", func(t *testing.T) {
		token, err := harness.ServiceAccountToken(ctx, e.cluster.Config, docOperatorNamespace, docOperatorAccount)
		if err != nil {
			t.Fatal(err)
		}
		c := vc(t, "auth/kubernetes/login", token)
		mayWrite(t, c, "sys/policies/acl/app.shop.api", policy, true)
		mayWrite(t, c, "sys/policies/acl/admin", policy, false)
		mayWrite(t, c, "auth/kubernetes/role/app.shop.api", map[string]any{"bound_service_account_names": "api",
			"bound_service_account_namespaces": "shop", "token_policies": "app.shop.api"}, true)
		mayWrite(t, c, "auth/kubernetes/role/app.shop.root", map[string]any{"bound_service_account_names": "api",
			"bound_service_account_namespaces": "shop", "token_policies": "root"}, false)
		// A list in one string matches the glob app.*: the comma is denied.
		mayWrite(t, c, "auth/kubernetes/role/app.shop.two", map[string]any{"bound_service_account_names": "api",
			"bound_service_account_namespaces": "shop", "token_policies": "app.shop.api,root"}, false)
	})
	t.Run("the JWT login writes app-eu-1.* and nothing else", func(t *testing.T) {
		token, err := harness.ServiceAccountTokenFor(ctx, e.cluster.Config, docOperatorNamespace, docOperatorAccount, "vko.vault.example.com")
		if err != nil {
			t.Fatal(err)
		}
		c := vc(t, "auth/jwt-eu-1/login", token)
		mayWrite(t, c, "sys/policies/acl/app-eu-1.shop.api", policy, true)
		mayWrite(t, c, "sys/policies/acl/app.shop.api", policy, false)
		mayWrite(t, c, "auth/jwt-eu-1/role/app-eu-1.shop.api", map[string]any{"role_type": "jwt", "user_claim": "sub",
			"bound_audiences": "apps.vault.example.com", "bound_claims": map[string]any{"sub": "system:serviceaccount:shop:api"},
			"token_policies": "app-eu-1.shop.api"}, true)
		mayWrite(t, c, "auth/jwt-eu-1/role/app-eu-1.shop.two", map[string]any{"role_type": "jwt", "user_claim": "sub",
			"bound_audiences": "apps.vault.example.com", "bound_claims": map[string]any{"sub": "system:serviceaccount:shop:api"},
			"token_policies": "app-eu-1.shop.api,root"}, false)
	})
	t.Run("the several clusters' policy confines eu-1 to its names", func(t *testing.T) {
		admin, err := e.vault.AdminClient()
		if err != nil {
			t.Fatal(err)
		}
		text, err := admin.Sys().GetPolicyWithContext(ctx, "vault-keycloak-operator-eu-1")
		if err != nil || !strings.Contains(text, `"sys/policies/acl/app-eu-1.*"`) {
			t.Errorf("policy vault-keycloak-operator-eu-1: %q, %v", text, err)
		}
	})
	t.Run("the Keycloak client reads what its roles allow and nothing beyond", func(t *testing.T) {
		var creds corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: docOperatorNamespace, Name: "prod-keycloak-credentials"}, &creds); err != nil {
			t.Fatal(err)
		}
		secret := string(creds.Data["clientSecret"])
		harness.KeepSecret(secret)
		checkKeycloakRightsConfined(t, e.keycloak, string(creds.Data["clientId"]), secret, "shop", "shop-web")

		// With view-realm in apps, the operator reads the page's client
		// policy there as a grace of one hour, and none in shop.
		c, err := keycloak.NewPool().Client("doc", keycloak.Config{URL: e.keycloak.URL, Realm: "master", Auth: keycloak.ClientCredentials,
			ClientID: string(creds.Data["clientId"]), ClientSecret: secret, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if grace, err := c.RotationGrace(context.Background(), "apps"); err != nil || !grace.Offered || grace.Lifetime != time.Hour {
			t.Errorf("the operator reads realm apps' rotation grace as %+v, %v; want one hour", grace, err)
		}
		// With view-events and the realms' admin events on, it reads a
		// regeneration someone else made.
		for _, realm := range []string{"apps", "shop"} {
			if _, err := c.RegenerationsSince(ctx, realm, keycloak.EventsCursor{}); err != nil {
				t.Errorf("read realm %s's admin events: %v", realm, err)
			}
		}
		start, err := c.RegenerationsSince(ctx, "shop", keycloak.EventsCursor{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ClientSecret(ctx, "shop", "shop-web"); err != nil { // the operator knows the client
			t.Fatal(err)
		}
		a, err := e.keycloak.Admin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.RegenerateSecret(ctx, "shop", "shop-web"); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, 10*time.Second, func() error {
			got, err := c.RegenerationsSince(ctx, "shop", start.Cursor)
			if err != nil || !slices.Contains(got.ClientIDs, "shop-web") {
				return fmt.Errorf("the regeneration of shop-web in realm shop: %+v, %v", got, err)
			}
			return nil
		})
	})
}

// docShell is a terminal for the docs' blocks in dir: kubectl (and its
// plugin kubectl vko), helm, vault and kcadm.sh on PATH, pointed at this cluster, this Vault as its root, and
// the run's Keycloak as its admin, as the docs ask the reader to set up.
func (e *env) docShell(t *testing.T, dir string) *harness.DocShell {
	t.Helper()
	bin, err := harness.KubectlBin(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"vault": os.Getenv("VKO_VAULT_BIN"),
		"helm":  os.Getenv(harness.EnvHelmBin),
	} {
		if _, err := os.Stat(target); err != nil {
			t.Fatalf("%s for the docs: %v; run 'make test', which builds it", name, err)
		}
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	kcHome := os.Getenv(harness.EnvKeycloakHome)
	if _, err := os.Stat(filepath.Join(kcHome, "bin", "kcadm.sh")); err != nil {
		t.Fatalf("kcadm.sh for the docs: %s=%q: %v; run 'make test', which fetches Keycloak", harness.EnvKeycloakHome, kcHome, err)
	}
	shell, err := harness.NewDocShell(dir, []string{
		"KUBECONFIG=" + e.cluster.Kubeconfig,
		"VAULT_ADDR=" + e.vault.Addr,
		"VAULT_TOKEN=" + e.vault.Token,
		"KEYCLOAK_URL=" + e.keycloak.URL,
		"KEYCLOAK_ADMIN=" + e.keycloak.User,
		"KEYCLOAK_ADMIN_PASSWORD=" + e.keycloak.Password,
	}, bin, filepath.Join(kcHome, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	return shell
}

// vaultReviewer is a token that lets a Vault outside the cluster review
// ServiceAccount tokens (system:auth-delegator).
func (e *env) vaultReviewer(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "vault-system"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "vault-reviewer", Namespace: "vault-system"}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "vault-reviewer-auth-delegator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "vault-reviewer", Namespace: "vault-system"}},
		},
	} {
		if err := e.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	token, err := harness.ServiceAccountToken(ctx, e.cluster.Config, "vault-system", "vault-reviewer")
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// forgetDocKeycloak removes from the run's Keycloak what a doc creates
// (the operator's client in master, the doc's realms), which another doc
// test may have left: each doc runs from the state its reader starts in.
func forgetDocKeycloak(t *testing.T, kc *harness.Keycloak, realms ...string) *harness.KeycloakAdmin {
	t.Helper()
	ctx := context.Background()
	a, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteClient(ctx, "master", "vault-keycloak-operator"); err != nil {
		t.Fatal(err)
	}
	for _, realm := range realms {
		if err := a.DeleteRealm(ctx, realm); err != nil {
			t.Fatal(err)
		}
	}
	return a
}
