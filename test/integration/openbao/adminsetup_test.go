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

package openbao_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The admin setup's VaultServer with every field, applied as written to an
// OpenBao behind TLS: its CA from the Secret it names, its requests in the
// Vault namespace it names, the operator logging in at the cluster's own
// mount with the several-clusters policy (set up with the page's own
// commands, bao for vault, inside that namespace). The page's VaultApp then
// gets its policy and role there, under the prefix, with what the grant's
// templates allow and the grant's TTL cap, and nothing in the root.
func TestAdminSetupsEveryFieldVaultServerOnOpenBao(t *testing.T) {
	ctx := context.Background()
	// The JWT block binds the operator's role to the subject of this one.
	const operatorAccount = "vault-keycloak-operator-controller-manager"
	const doc = "docs/admin-setup.md"
	serverYAML, err := harness.DocYAML(doc, "kind: VaultServer", "caSecretRef")
	if err != nil {
		t.Fatal(err)
	}
	appYAML, err := harness.DocYAML(doc, "serverRef: {name: central-vault}")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tlsBao, err := harness.StartOpenBaoTLS(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tlsBao.Stop)

	// The page's server, at this OpenBao's address: the one placeholder.
	server := &vaultv1beta1.VaultServer{}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(serverYAML, "https://vault.example.com:8200", tlsBao.Addr)), server); err != nil {
		t.Fatal(err)
	}
	login := server.Spec.Login.Kubernetes
	if login == nil || server.Spec.Namespace == "" || server.Spec.CASecretRef == nil || server.Spec.NamePrefix == "" {
		t.Fatalf("%s's VaultServer no longer has a Kubernetes login, a namespace, a CA Secret and a prefix: this test proves nothing of it", doc)
	}

	tokenPath := filepath.Join(dir, "sa-token")
	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token, cfg.ServiceAccountTokenPath = "", "", tokenPath
	op, err := harness.StartOperator(manager.Options{Vault: cfg, OperatorNamespace: operatorNamespace, MaxBackoff: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Stop)
	ca, err := os.ReadFile(tlsBao.CACert)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorAccount, Namespace: operatorNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: appNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: server.Spec.CASecretRef.Name, Namespace: operatorNamespace}, Data: map[string][]byte{"ca.crt": ca}},
	} {
		if err := op.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	// The admin's part, inside the Vault namespace: the page's block for a
	// cluster of its own (its mount and its policy), with OpenBao's CLI.
	in, err := tlsBao.CreateNamespace(ctx, server.Spec.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	shell := baoShell(t, tlsBao, server.Spec.Namespace, dir, op.Kubeconfig)
	runBlock(t, shell, "vault auth enable -path=kubernetes-eu-1")
	// "its config, as above", and "the role bound to that policy".
	if err := in.ConfigureKubernetesAuthAt(ctx, login.Mount, op.Client, op.Config); err != nil {
		t.Fatal(err)
	}
	admin := adminOf(t, in)
	operatorPolicy := "vault-keycloak-operator-" + server.Spec.NamePrefix
	if _, err := admin.Logical().WriteWithContext(ctx, "auth/"+login.Mount+"/role/"+login.Role, map[string]any{
		"bound_service_account_names": operatorAccount, "bound_service_account_namespaces": operatorNamespace,
		"token_policies": operatorPolicy, "token_no_default_policy": true,
	}); err != nil {
		t.Fatal(err)
	}
	token, err := harness.ServiceAccountToken(ctx, op.Config, operatorNamespace, operatorAccount)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenPath, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}

	if err := op.Client.Create(ctx, server); err != nil {
		t.Fatalf("the page's VaultServer: %v", err)
	}
	got := harness.WaitCondition(t, op, client.ObjectKey{Name: server.Name}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
		vaultv1beta1.TypeConnected, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, 30*time.Second)
	if got.Status.Product != "OpenBao" || !strings.HasPrefix(got.Status.Version, "2.7.2") || got.Status.Cluster != server.Spec.Cluster {
		t.Errorf("VaultServer status: product %q, version %q, cluster %q; want OpenBao 2.7.2 and %q", got.Status.Product, got.Status.Version, got.Status.Cluster, server.Spec.Cluster)
	}

	app := &vaultv1beta1.VaultApp{}
	if err := yaml.UnmarshalStrict([]byte(appYAML), app); err != nil {
		t.Fatal(err)
	}
	app.Name, app.Namespace = "api", appNamespace
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatalf("the page's VaultApp: %v", err)
	}
	app = harness.WaitCondition(t, op, client.ObjectKeyFromObject(app), func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions },
		vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 30*time.Second)
	name := "app-" + server.Spec.NamePrefix + "." + appNamespace + ".api"
	if app.Status.PolicyName != name || app.Status.Vault == nil || app.Status.Vault.Namespace != server.Spec.Namespace {
		t.Errorf("VaultApp status: policy %q, vault %+v; want %q in namespace %q", app.Status.PolicyName, app.Status.Vault, name, server.Spec.Namespace)
	}
	text := policy(t, admin, name)
	for _, want := range []string{`path "secret/data/shop/db/*"`, `path "database/creds/shop"`, "in cluster " + server.Spec.Cluster} {
		if !strings.Contains(text, want) {
			t.Errorf("policy %s in OpenBao namespace %s lacks %s:\n%s", name, server.Spec.Namespace, want, text)
		}
	}
	role, err := admin.Logical().ReadWithContext(ctx, "auth/"+server.Spec.AppAuth.Kubernetes.Mount+"/role/"+name)
	if err != nil || role == nil {
		t.Fatalf("role %s in OpenBao namespace %s: %v, %v", name, server.Spec.Namespace, role, err)
	}
	if maxTTL, want := role.Data["token_max_ttl"], server.Spec.Access[0].MaxTokenTTL.Seconds(); toSeconds(maxTTL) != want {
		t.Errorf("role %s token_max_ttl %v, want the grant's cap %v s", name, maxTTL, want)
	}
	if text := policy(t, adminOf(t, tlsBao), name); text != "" {
		t.Errorf("policy %s also in OpenBao's root namespace", name)
	}

	// The page's JWT variant of the same server: the VaultApp and the
	// server go, the admin runs the JWT block (the signing key copied from
	// this cluster), and the server comes back with the page's JWT login
	// and appAuth in the place of the Kubernetes mounts.
	for _, obj := range []client.Object{app, got} {
		if err := op.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, 30*time.Second, func() error {
			if err := op.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s %s still there (%v)", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
			}
			return nil
		})
	}
	keys, err := harness.ClusterPublicKeys(ctx, op.Config)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, ".sa.pub")
	if err := os.WriteFile(keyFile, []byte(strings.Join(keys, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	shell.Placeholders = map[string]string{"scp control-plane:/etc/kubernetes/pki/sa.pub": "cp " + keyFile}
	runBlock(t, shell, "vault auth enable -path=jwt-eu-1")
	jwtYAML, err := harness.DocYAML(doc, "login: {jwt:")
	if err != nil {
		t.Fatal(err)
	}
	server = &vaultv1beta1.VaultServer{}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(serverYAML, "https://vault.example.com:8200", tlsBao.Addr)), server); err != nil {
		t.Fatal(err)
	}
	server.Spec.Login, server.Spec.AppAuth = vaultv1beta1.VaultLogin{}, vaultv1beta1.VaultAuthMethod{}
	if err := yaml.UnmarshalStrict([]byte("spec:\n"+jwtYAML), server); err != nil {
		t.Fatal(err)
	}
	if server.Spec.Login.JWT == nil || server.Spec.AppAuth.JWT == nil {
		t.Fatalf("%s's JWT lines no longer set a JWT login and appAuth: this test proves nothing of them", doc)
	}
	if err := op.Client.Create(ctx, server); err != nil {
		t.Fatalf("the page's VaultServer with JWT: %v", err)
	}
	harness.WaitCondition(t, op, client.ObjectKey{Name: server.Name}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
		vaultv1beta1.TypeConnected, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, 30*time.Second)
	app = &vaultv1beta1.VaultApp{}
	if err := yaml.UnmarshalStrict([]byte(appYAML), app); err != nil {
		t.Fatal(err)
	}
	app.Name, app.Namespace = "api", appNamespace
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app = harness.WaitCondition(t, op, client.ObjectKeyFromObject(app), func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions },
		vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 30*time.Second)
	role, err = admin.Logical().ReadWithContext(ctx, "auth/"+server.Spec.AppAuth.JWT.Mount+"/role/"+name)
	if err != nil || role == nil || role.Data["role_type"] != "jwt" {
		t.Fatalf("JWT role %s in OpenBao namespace %s: %v, %v", name, server.Spec.Namespace, role, err)
	}
	// Bound to this cluster's issuer, as the operator's own role the page
	// wrote is: the status says which.
	var jwtServer vaultv1beta1.VaultServer
	if err := op.Client.Get(ctx, client.ObjectKey{Name: server.Name}, &jwtServer); err != nil {
		t.Fatal(err)
	}
	operatorRole, err := admin.Logical().ReadWithContext(ctx, "auth/"+server.Spec.Login.JWT.Mount+"/role/"+server.Spec.Login.JWT.Role)
	if err != nil || operatorRole == nil {
		t.Fatalf("the operator's role: %v, %v", operatorRole, err)
	}
	issuer := jwtServer.Status.AppAuthIssuer
	for what, claims := range map[string]any{"app role " + name: role.Data["bound_claims"], "the operator's role": operatorRole.Data["bound_claims"]} {
		if got, _ := claims.(map[string]any); issuer == "" || fmt.Sprint(got["iss"]) != issuer && fmt.Sprint(got["iss"]) != "["+issuer+"]" {
			t.Errorf("%s binds iss %v; want this cluster's issuer %q (status.appAuthIssuer)", what, got["iss"], issuer)
		}
	}

	// A workload logs in as the status says, with a token of the appAuth
	// audience, and reads its secret in the namespace's KV mount.
	if err := admin.Sys().MountWithContext(ctx, "secret", &vaultapi.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.KVv2("secret").Put(ctx, "shop/db/config", map[string]any{"dsn": "platform"}); err != nil {
		t.Fatal(err)
	}
	access := app.Status.Vault
	if access == nil || access.Audience != server.Spec.AppAuth.JWT.Audience || access.Namespace != server.Spec.Namespace {
		t.Fatalf("VaultApp status.vault %+v: want the appAuth audience %q and namespace %q", access, server.Spec.AppAuth.JWT.Audience, server.Spec.Namespace)
	}
	jwt, err := harness.ServiceAccountTokenFor(ctx, op.Config, appNamespace, "api", access.Audience)
	if err != nil {
		t.Fatal(err)
	}
	workload := adminOf(t, tlsBao.InNamespace(access.Namespace))
	workload.ClearToken()
	session, err := workload.Logical().WriteWithContext(ctx, access.LoginPath, map[string]any{"role": access.Role, "jwt": jwt})
	if err != nil || session == nil || session.Auth == nil {
		t.Fatalf("the workload's login at %s as %s: %v", access.LoginPath, access.Role, err)
	}
	harness.KeepSecret(session.Auth.ClientToken)
	workload.SetToken(session.Auth.ClientToken)
	if kv, err := workload.KVv2(access.KVMount).Get(ctx, "shop/db/config"); err != nil || kv.Data["dsn"] != "platform" {
		t.Errorf("the workload reads shop/db/config: %v, %v", kv, err)
	}
}

// baoShell is a terminal of an admin of OpenBao namespace ns, typing the
// admin setup's commands: bao in the place of vault, VAULT_NAMESPACE set,
// the server's CA trusted, kubectl at the cluster of kubeconfig.
func baoShell(t *testing.T, bao *harness.Vault, ns, dir, kubeconfig string) *harness.DocShell {
	t.Helper()
	bin, err := harness.KubectlBin(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Getenv(harness.EnvBaoBin), filepath.Join(bin, "vault")); err != nil {
		t.Fatal(err)
	}
	shell, err := harness.NewDocShell(dir, []string{"VAULT_ADDR=" + bao.Addr, "VAULT_TOKEN=" + bao.Token,
		"VAULT_CACERT=" + bao.CACert, "VAULT_NAMESPACE=" + ns, "KUBECONFIG=" + kubeconfig}, bin)
	if err != nil {
		t.Fatal(err)
	}
	return shell
}

// runBlock runs the run block of docs/admin-setup.md that holds mark.
func runBlock(t *testing.T, shell *harness.DocShell, mark string) {
	t.Helper()
	blocks, err := harness.DocBlocks("docs/admin-setup.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if !strings.Contains(b.Code, mark) {
			continue
		}
		out, err := shell.Run(context.Background(), b, time.Minute)
		t.Logf("%s:\n%s", b, harness.Indent(out, "  | "))
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("docs/admin-setup.md has no run block holding %q", mark)
}

// toSeconds reads a duration field of an OpenBao answer (a JSON number).
func toSeconds(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case interface{ Float64() (float64, error) }:
		f, _ := n.Float64()
		return f
	}
	return -1
}
