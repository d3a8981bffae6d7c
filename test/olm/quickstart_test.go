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
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestQuickStartAsWritten runs the README's quick start block by block, as
// an admin copies it into a terminal: the kubectl, helm, vault and kcadm.sh
// commands against this cluster, a Vault of its own and the run's Keycloak.
// The test fills in only what the reader sets first (where Vault and
// Keycloak are, their admins' credentials, the kubeconfig), and plays the
// kubelet where a block says so: it runs the manager in the place of the
// chart's pod, with the chart's RBAC and nothing else — in Kubernetes, Vault
// and Keycloak the operator has exactly the rights the quick start gives it.
// The blocks end with the checks a user makes (kubectl wait, a workload's
// login and read, the Secret's content); the test then checks the same
// from outside and that no secret value reached the manager's log.
func TestQuickStartAsWritten(t *testing.T) {
	blocks := docBlocks(t, "README.md")
	e := newEnv(t)
	ctx := context.Background()

	// A checkout of the repository, as the reader's working directory.
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(harness.RepoRoot(), "dist"), filepath.Join(dir, "dist")); err != nil {
		t.Fatal(err)
	}
	shell := e.docShell(t, dir)
	// The quick start creates realm shop and the operator's client.
	forgetDocKeycloak(t, e.keycloak, "shop")

	const operatorNamespace = "vault-keycloak-operator"
	runBlocks(t, e, shell, blocks, map[string]func(){
		// What the kubelet does for the chart's Deployment.
		"operator-pod": func() {
			e.startPod(t, operatorPod{name: "quickstart", deployment: chartDeployment, service: chartWebhookService, certSecret: chartCertSecret, serviceAccount: chartServiceAccount, namespace: operatorNamespace})
		},
	})

	// docs/app-teams.md's login from a pod, with a token of shop-api in the
	// place of the one the kubelet mounts.
	podToken, err := harness.ServiceAccountToken(ctx, e.cluster.Config, "shop", "shop-api")
	if err != nil {
		t.Fatal(err)
	}
	e.secrets = append(e.secrets, podToken)
	tokenFile := filepath.Join(dir, ".pod-token")
	if err := os.WriteFile(tokenFile, []byte(podToken), 0o600); err != nil {
		t.Fatal(err)
	}
	shell.Placeholders = map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount/token": tokenFile}
	runBlocks(t, e, shell, docBlocks(t, "docs/app-teams.md"), nil)
	if out, err := shell.Run(ctx, harness.DocBlock{File: "quickstart_test.go", Code: `echo "$LOGIN_PATH $KV_MOUNT $KV_PREFIX"`}, time.Minute); err != nil || strings.TrimSpace(out) != "auth/kubernetes/login secret shop/" {
		t.Errorf("status.vault of shop-api gave %q (%v), want the quick start's login path, KV mount and prefix", out, err)
	}

	// What the blocks showed, seen from outside: the workload read its
	// secret (block 6 printed it) and the Secret holds the client's secret.
	if out, err := shell.Run(ctx, harness.DocBlock{File: "quickstart_test.go", Code: `VAULT_TOKEN=$APP_TOKEN vault kv get -field=password secret/shop/db`}, time.Minute); err != nil || strings.TrimSpace(out) != "change-me" {
		t.Errorf("the workload's token reads %q (%v), want the secret the quick start wrote", out, err)
	}
	admin, err := e.keycloak.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := admin.ClientSecret(ctx, "shop", "shop-web")
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "shop-web-oidc"}, &s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["clientSecret"]) != want || len(want) < 16 {
		t.Errorf("Secret shop/shop-web-oidc does not hold the client's secret")
	}
	var creds corev1.Secret
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: "keycloak-credentials"}, &creds); err != nil {
		t.Fatal(err)
	}
	e.secrets = append(e.secrets, want, string(creds.Data["clientSecret"]))
	t.Run("the operator's Keycloak client reaches no other realm", func(t *testing.T) {
		checkKeycloakRightsConfined(t, e.keycloak, "vault-keycloak-operator", string(creds.Data["clientSecret"]), "shop", "shop-web")
	})

	// docs/install.md's uninstall, in the same terminal: the operator
	// removes what it wrote before it goes.
	runBlocks(t, e, shell, docBlocks(t, "docs/install.md"), nil)
	vault, err := e.vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	if policy, err := vault.Sys().GetPolicyWithContext(ctx, "app.shop.shop-api"); err != nil || policy != "" {
		t.Errorf("after the uninstall, Vault still has policy app.shop.shop-api (%v)", err)
	}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "shop-web-oidc"}, &s); err == nil {
		t.Errorf("after the uninstall, Secret shop/shop-web-oidc is still there")
	}
	t.Run("no secret value in the manager's log", e.checkLogs)
}

// checkKeycloakRightsConfined logs in as the operator's Keycloak client
// and shows what its rights (view-clients of realm) allow and refuse: it
// finds the granted client and reads its secret; it cannot regenerate that
// secret, change the realm's settings, read the realm's users, or read
// anything of another realm (master). Reading another client's secret in
// the same realm is within view-clients: the KeycloakServer's grants, which
// the webhook and the controller check, are what confine that.
func checkKeycloakRightsConfined(t *testing.T, kc *harness.Keycloak, clientID, secret, realm, granted string) {
	ctx := context.Background()
	gc := gocloak.NewClient(kc.URL)
	jwt, err := gc.LoginClient(ctx, clientID, secret, "master")
	if err != nil {
		t.Fatalf("log in as the operator's client: %v", err)
	}
	harness.KeepSecret(jwt.AccessToken)
	clients, err := gc.GetClients(ctx, jwt.AccessToken, realm, gocloak.GetClientsParams{ClientID: &granted})
	if err != nil || len(clients) != 1 {
		t.Fatalf("find client %s in realm %s: %v (%d found)", granted, realm, err, len(clients))
	}
	id := gocloak.PString(clients[0].ID)
	if _, err := gc.GetClientSecret(ctx, jwt.AccessToken, realm, id); err != nil {
		t.Errorf("read the granted client's secret: %v", err)
	}
	base := strings.TrimRight(kc.URL, "/") + "/admin/realms/"
	for _, r := range []struct{ what, method, url, body string }{
		{"regenerate the granted client's secret", http.MethodPost, base + realm + "/clients/" + id + "/client-secret", ""},
		{"change the realm's settings", http.MethodPut, base + realm, `{"enabled":false}`},
		{"read the realm's users", http.MethodGet, base + realm + "/users", ""},
		{"read another realm's clients", http.MethodGet, base + "master/clients", ""},
		{"read another realm's users", http.MethodGet, base + "master/users", ""},
	} {
		req := gc.RestyClient().R().SetContext(ctx).SetAuthToken(jwt.AccessToken)
		if r.body != "" {
			req = req.SetHeader("Content-Type", "application/json").SetBody(r.body)
		}
		resp, err := req.Execute(r.method, r.url)
		if err != nil {
			t.Fatalf("%s: %v", r.what, err)
		}
		if resp.StatusCode() != http.StatusForbidden {
			t.Errorf("the operator's Keycloak client may %s: %s, want 403 Forbidden", r.what, resp.Status())
		}
	}
}

// docBlocks are the marked blocks of doc.
func docBlocks(t *testing.T, doc string) []harness.DocBlock {
	t.Helper()
	blocks, err := harness.DocBlocks(doc)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// runBlocks runs blocks in shell in order, stopping at the first that
// fails; after a block marked then=NAME it does then[NAME], the part no
// shell can play here.
func runBlocks(t *testing.T, e *env, shell *harness.DocShell, blocks []harness.DocBlock, then map[string]func()) {
	t.Helper()
	for _, b := range blocks {
		if b.Where != "" {
			// A setup the quick start does not make (a rotate grant): the
			// test that makes it runs the block.
			continue
		}
		out, err := shell.Run(context.Background(), b, 4*time.Minute)
		t.Logf("%s:\n%s", b, harness.Indent(out, "  | "))
		if err != nil {
			msg := err.Error()
			if e.manager != nil {
				msg += "\nmanager log:\n" + e.manager.LogTail(30)
			}
			t.Fatal(msg)
		}
		if b.Then == "" {
			continue
		}
		do, ok := then[b.Then]
		if !ok {
			t.Fatalf("%s: the test does not know then=%s", b, b.Then)
		}
		do()
	}
}
