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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const vkoManifest = `apiVersion: vault.exemple.com/v1beta1
kind: VaultApp
metadata:
  name: shop-api
  namespace: vko-shop
spec:
  serverRef: {name: vko-vault}
  policy:
    rules:
    - {path: "db/*", capabilities: [read, list]}
    vaultPaths:
    - {path: database/creds/vko-shop, capabilities: [read]}
`

// kubectl vko against the real control plane and Vault, found by kubectl
// as a plugin (one binary copied onto PATH): render, before the VaultApp
// exists, shows the policy the operator then writes to Vault (all of it
// but the UID in its mark) and the role; grants and why say what the admin
// granted; a grant taken back shows in why as the refusal and in the
// conditions; refresh is answered in the status; shards counts what the
// API server lists, by the shard each namespace hashes into.
func TestKubectlVko(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "vko", "")
	pluginDir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(pluginDir, "kubectl-vko"), "./cmd/kubectl-vko")
	build.Dir = harness.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kubectl-vko: %v\n%s", err, out)
	}
	vko := func(t *testing.T, args ...string) string {
		t.Helper()
		cmd := exec.Command(east.op.KubectlPath, append([]string{"vko", "--kubeconfig", east.op.Kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl vko %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	server := vaultServerAt("vko-vault", vaultServer.Addr, east.mount)
	server.Spec.Cluster = "vko"
	server.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"vko-shop"}, MaxTokenTTL: &metav1.Duration{Duration: 30 * time.Minute},
		Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
			{Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}},
		}}}
	if err := east.op.Client.Create(ctx, server); err != nil {
		t.Fatal(err)
	}
	east.waitServer(t, "vko-vault", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
	east.namespace(t, "vko-shop")
	manifest := filepath.Join(t.TempDir(), "shop-api.yaml")
	if err := os.WriteFile(manifest, []byte(vkoManifest), 0o600); err != nil {
		t.Fatal(err)
	}

	rendered := vko(t, "render", manifest)
	east.op.Kubectl(t, "apply", "-f", manifest)
	key := client.ObjectKey{Namespace: "vko-shop", Name: "shop-api"}
	east.wait(t, key, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	t.Run("render is what the operator wrote", func(t *testing.T) {
		m := regexp.MustCompile(`(?s)# Vault ACL policy app\.vko-shop\.shop-api\n# Managed by [^\n]*\n(.*?)---\n# Vault role app\.vko-shop\.shop-api on auth/` + east.mount + `\n(.*)$`).FindStringSubmatch(rendered)
		if m == nil {
			t.Fatalf("render:\n%s", rendered)
		}
		written := vaultState(t, east.mount)["policy app.vko-shop.shop-api"]
		if _, body, _ := strings.Cut(written, "\n"); body != m[1] {
			t.Errorf("rendered policy:\n%s\nVault holds:\n%s", m[1], written)
		}
		admin, err := vaultServer.AdminClient()
		if err != nil {
			t.Fatal(err)
		}
		role, err := admin.Logical().Read("auth/" + east.mount + "/role/app.vko-shop.shop-api")
		if err != nil || role == nil {
			t.Fatalf("the role in Vault: %v %v", role, err)
		}
		// What Vault holds, and what the render says of it.
		for field, want := range map[string]string{
			"token_ttl": "1800", "token_max_ttl": "1800", "bound_service_account_names": "[shop-api]", "token_policies": "[app.vko-shop.shop-api]",
		} {
			if held := fmt.Sprint(role.Data[field]); held != want {
				t.Errorf("role %s: Vault holds %s, want %s", field, held, want)
			}
		}
		for _, want := range []string{"token_ttl: 30m0s", "token_max_ttl: 30m0s", "bound_service_account_names:\n- shop-api", "token_policies:\n- app.vko-shop.shop-api"} {
			if !strings.Contains(m[2], want) {
				t.Errorf("the rendered role lacks %q:\n%s", want, m[2])
			}
		}
	})
	t.Run("grants and why", func(t *testing.T) {
		grants := vko(t, "grants", "vko-shop")
		for _, want := range []string{"VaultServer vko-vault:", "secret/data/vko-shop/*: read, list", "database/creds/vko-shop: read", "token TTL up to 30m0s"} {
			if !strings.Contains(grants, want) {
				t.Errorf("grants lacks %q:\n%s", want, grants)
			}
		}
		why := vko(t, "why", "vaultapp/shop-api", "-n", "vko-shop")
		for _, want := range []string{`Ready\s+True\s+Synced`, `Normal\s+Created\s+wrote policy and role`, `VaultServer vko-vault:`, `covers everything the spec asks`} {
			if !regexp.MustCompile(want).MatchString(why) {
				t.Errorf("why lacks %s:\n%s", want, why)
			}
		}
	})
	t.Run("shards splits the cluster's objects by the API server's hash", func(t *testing.T) {
		out := vko(t, "shards", "3")
		// What the plugin should say, from the objects the API server lists
		// and each shard's own rule (Owns, as its replicas filter).
		type load struct{ namespaces, apps, creds int }
		want := make([]load, 3)
		seen := map[string]bool{}
		for _, kind := range []schema.GroupVersionKind{
			vaultv1beta1.GroupVersion.WithKind("VaultAppList"), secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredentialList"),
		} {
			var list metav1.PartialObjectMetadataList
			list.SetGroupVersionKind(kind)
			if err := east.op.Client.List(ctx, &list); err != nil {
				t.Fatal(err)
			}
			for _, obj := range list.Items {
				for i := range want {
					if !(shard.Shard{Index: i, Count: 3}).Owns(obj.Namespace) {
						continue
					}
					if !seen[obj.Namespace] {
						seen[obj.Namespace] = true
						want[i].namespaces++
					}
					if kind.Group == vaultv1beta1.GroupVersion.Group {
						want[i].apps++
					} else {
						want[i].creds++
					}
				}
			}
		}
		shop := 0
		for i, l := range want {
			line := fmt.Sprintf("shard %d: %d namespaces with objects, %d VaultApps, %d credentials", i, l.namespaces, l.apps, l.creds)
			if !strings.Contains(out, line) {
				t.Errorf("shards 3 lacks %q:\n%s", line, out)
			}
			if (shard.Shard{Index: i, Count: 3}).Owns("vko-shop") {
				shop = l.apps
			}
		}
		if shop == 0 {
			t.Errorf("the shard of vko-shop counts none of its VaultApps:\n%s", out)
		}
	})
	t.Run("refresh is answered in the status", func(t *testing.T) {
		out := vko(t, "refresh", "vapp/shop-api", "-n", "vko-shop")
		m := regexp.MustCompile(`refresh-request=(\S+)\)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("refresh: %s", out)
		}
		harness.Eventually(t, 20*time.Second, func() error {
			var app vaultv1beta1.VaultApp
			if err := east.op.Client.Get(ctx, key, &app); err != nil {
				return err
			}
			if app.Status.LastRefreshRequest != m[1] {
				return fmt.Errorf("status.lastRefreshRequest %q, want %q", app.Status.LastRefreshRequest, m[1])
			}
			return nil
		})
	})
	t.Run("a grant taken back shows in why", func(t *testing.T) {
		if err := east.op.Client.Get(ctx, client.ObjectKey{Name: "vko-vault"}, server); err != nil {
			t.Fatal(err)
		}
		server.Spec.Access[0].Paths = server.Spec.Access[0].Paths[:1]
		if err := east.op.Client.Update(ctx, server); err != nil {
			t.Fatal(err)
		}
		var why string
		harness.Eventually(t, 30*time.Second, func() error {
			why = vko(t, "why", "vaultapp/shop-api", "-n", "vko-shop")
			if !regexp.MustCompile(`AccessGranted\s+False\s+NotAllowed`).MatchString(why) {
				return fmt.Errorf("no AccessGranted False NotAllowed yet:\n%s", why)
			}
			return nil
		})
		if !strings.Contains(why, `does not cover:`) || !strings.Contains(why, `spec.policy.vaultPaths[0]: Forbidden: read on "database/creds/vko-shop" not granted to namespace "vko-shop"`) {
			t.Errorf("why after the grant was taken back:\n%s", why)
		}
	})
}
