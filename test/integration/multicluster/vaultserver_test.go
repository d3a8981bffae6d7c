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
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func vaultServerAt(name, address, mount string) *vaultv1beta1.VaultServer {
	return &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: address,
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: mount, Role: "vault-keycloak-operator"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: mount}}},
		},
	}
}

// waitServer waits until the VaultServer's Connected condition has the
// status and reason for its generation, and returns the server.
func (c *cluster) waitServer(t *testing.T, name string, status metav1.ConditionStatus, reason string) *vaultv1beta1.VaultServer {
	t.Helper()
	return harness.WaitCondition(t, c.op, client.ObjectKey{Name: name}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
		vaultv1beta1.TypeConnected, status, reason, 30*time.Second)
}

// A VaultServer tells in its status and Events whether the operator can
// log in, the version of Vault and this cluster's name in its marks; every
// request carries its Vault namespace.
func TestVaultServerStatus(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	proxy, err := harness.StartCountingProxy(vaultServer.Addr, func(r *http.Request) string {
		if r.URL.Path == "/v1/sys/health" {
			return "health, namespace=" + r.Header.Get("X-Vault-Namespace")
		}
		return "namespace=" + r.Header.Get("X-Vault-Namespace")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)

	// Vault OSS ignores the namespace; OpenBao routes by it, so there the
	// namespace is made and the cluster trusted in it.
	if vaultServer.Product() == "OpenBao" {
		inTeam, err := vaultServer.CreateNamespace(ctx, "team-platform")
		if err != nil {
			t.Fatal(err)
		}
		east.trustIn(t, inTeam, "")
	}
	s := vaultServerAt("central", proxy.URL, east.mount)
	s.Spec.Namespace = "team-platform"
	if err := east.op.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	got := east.waitServer(t, "central", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
	var kubeSystem corev1.Namespace
	if err := east.op.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(got.Status.Product).To(Equal(vaultServer.Product()))
	NewWithT(t).Expect(got.Status.Version).To(Equal(vaultServer.PinnedVersion(t)))
	NewWithT(t).Expect(got.Status.Cluster).To(Equal(string(kubeSystem.UID)), "no spec.cluster: the kube-system UID")
	NewWithT(t).Expect(meta.IsStatusConditionTrue(got.Status.Conditions, vaultv1beta1.TypeReady)).To(BeTrue())
	east.op.WaitEvent(t, "", "central", vaultv1beta1.ReasonConnected)
	// Vault OSS ignores the header; Enterprise and OpenBao route by it.
	// The health of the server is asked outside any namespace (OpenBao
	// answers it nowhere else), every other request inside it.
	classes := proxy.Counts()
	NewWithT(t).Expect(classes).To(HaveLen(2), "requests by namespace header: %v", classes)
	NewWithT(t).Expect(classes).To(HaveKey("namespace=team-platform"))
	NewWithT(t).Expect(classes).To(HaveKey("health, namespace="))

	// A login Vault refuses says so, with a Warning Event.
	refused := vaultServerAt("wrong-role", vaultServer.Addr, east.mount)
	refused.Spec.Login.Kubernetes.Role = "no-such-role"
	if err := east.op.Client.Create(ctx, refused); err != nil {
		t.Fatal(err)
	}
	msg := conditionMessage(east.waitServer(t, "wrong-role", metav1.ConditionFalse, vaultv1beta1.ReasonVaultError), vaultv1beta1.TypeConnected)
	NewWithT(t).Expect(msg).To(ContainSubstring(`log in to Vault through auth/` + east.mount + ` as role "no-such-role"`))
	east.op.WaitEvent(t, "", "wrong-role", vaultv1beta1.ReasonVaultError)

	// A Vault that does not answer, and a CA Secret that is not there.
	down := vaultServerAt("down", "http://127.0.0.1:1", east.mount)
	noCA := vaultServerAt("no-ca", vaultServer.Addr, east.mount)
	noCA.Spec.CASecretRef = &vaultv1beta1.SecretKeySelector{Name: "vault-ca"}
	for _, o := range []client.Object{down, noCA} {
		if err := east.op.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	east.waitServer(t, "down", metav1.ConditionFalse, vaultv1beta1.ReasonVaultUnavailable)
	msg = conditionMessage(east.waitServer(t, "no-ca", metav1.ConditionFalse, vaultv1beta1.ReasonCAInvalid), vaultv1beta1.TypeConnected)
	NewWithT(t).Expect(msg).To(ContainSubstring("read the CA Secret " + operatorNamespace + "/vault-ca"))

	// kubectl shows it all.
	out := east.op.Kubectl(t, "get", "vaultservers")
	for _, want := range []string{"ADDRESS", "READY", "REASON", "PRODUCT", "VERSION", "CLUSTER", "central", "Connected", vaultServer.Product(), vaultServer.PinnedVersion(t), "VaultUnavailable", "CAInvalid"} {
		NewWithT(t).Expect(out).To(ContainSubstring(want))
	}
}

// The webhook refuses a grant that reaches Vault's own paths, naming the
// field and the rule, and warns of one that reaches other namespaces.
func TestVaultServerAdmission(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	s := vaultServerAt("grants", vaultServer.Addr, east.mount)
	s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}},
		{Template: "auth/kubernetes/role/{namespace}", Capabilities: []vaultv1beta1.Capability{"update"}},
	}}}
	err := east.op.Client.Create(ctx, s)
	NewWithT(t).Expect(err).To(HaveOccurred())
	NewWithT(t).Expect(err.Error()).To(ContainSubstring(`spec.access[0].paths[1].template: Forbidden: paths under auth/ are never granted to namespaces`))

	// Admitted with a warning that kubectl prints: the glob after
	// {namespace} reaches the creds of namespaces named shop-….
	s.Spec.Access[0].Paths = s.Spec.Access[0].Paths[:1]
	s.Spec.Access[0].Paths[0].Template = "database/creds/{namespace}-*"
	s.TypeMeta = metav1.TypeMeta{APIVersion: vaultv1beta1.GroupVersion.String(), Kind: "VaultServer"}
	manifest, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "vaultserver.yaml")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	out := east.op.Kubectl(t, "create", "-f", file)
	NewWithT(t).Expect(out).To(ContainSubstring(`Warning: spec.access[0].paths[0].template "database/creds/{namespace}-*": {namespace} shares its segment with "-*", so one namespace's path can be another's`))
	NewWithT(t).Expect(out).To(ContainSubstring("vaultserver.vault.exemple.com/grants created"))
}

func conditionMessage(s *vaultv1beta1.VaultServer, typ string) string {
	if c := meta.FindStatusCondition(s.Status.Conditions, typ); c != nil {
		return c.Message
	}
	return ""
}

// One manager, two Vaults: VaultApps on the environment's Vault and on a
// VaultServer's. The second stopped, only its VaultApps say
// VaultUnavailable; the others keep converging; back, it converges too.
func TestTwoVaultsBehindOneManager(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	second, err := harness.StartVaultUnderTest(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	prepare := func() {
		t.Helper()
		if err := second.ConfigureKubernetesAuthAt(ctx, east.mount, east.op.Client, east.op.Config); err != nil {
			t.Fatal(err)
		}
		policy := harness.OperatorVaultPolicyFor(east.mount, "second")
		if err := second.AllowOperatorAt(ctx, east.mount, "vault-keycloak-operator", policy, operatorNamespace, operatorAccount); err != nil {
			t.Fatal(err)
		}
	}
	prepare()
	s := vaultServerAt("second", second.Addr, east.mount)
	s.Spec.Cluster, s.Spec.NamePrefix = "east", "second"
	s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
	}}}
	if err := east.op.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	east.waitServer(t, "second", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)

	east.namespace(t, "shop")
	onEnv := east.createApp(t, "shop", "a")
	onSecond := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{
			ServerRef:      &vaultv1beta1.ServerReference{Name: "second"},
			Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "b/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"b"}},
		},
	}
	if err := east.op.Client.Create(ctx, onSecond); err != nil {
		t.Fatal(err)
	}
	east.wait(t, onEnv, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	east.wait(t, client.ObjectKeyFromObject(onSecond), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	// kubectl get vaultservers counts the VaultApps written there (the
	// count is written at most every 5 s).
	harness.Eventually(t, 20*time.Second, func() error {
		var got vaultv1beta1.VaultServer
		if err := east.op.Client.Get(ctx, client.ObjectKey{Name: "second"}, &got); err != nil {
			return err
		}
		if got.Status.VaultApps != 1 {
			return fmt.Errorf("status.vaultApps = %d, want 1", got.Status.VaultApps)
		}
		return nil
	})
	admin2, err := second.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := admin2.Sys().GetPolicy("app-second.shop.b"); !strings.Contains(text, "in cluster east (id "+east.id+").") {
		t.Fatalf("the second Vault's policy app-second.shop.b:\n%s", text)
	}
	if _, ok := vaultState(t)["policy app.shop.a"]; !ok {
		t.Fatal("the environment's Vault lacks app.shop.a")
	}
	if text, _ := admin2.Sys().GetPolicy("app.shop.a"); text != "" {
		t.Fatal("app.shop.a was written to the second Vault too")
	}

	// The second Vault stops: only b says so; a still converges.
	second.Stop()
	var b vaultv1beta1.VaultApp
	if err := east.op.Client.Get(ctx, client.ObjectKeyFromObject(onSecond), &b); err != nil {
		t.Fatal(err)
	}
	b.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "list"}
	if err := east.op.Client.Update(ctx, &b); err != nil {
		t.Fatal(err)
	}
	east.wait(t, client.ObjectKeyFromObject(onSecond), metav1.ConditionFalse, vaultv1beta1.ReasonVaultUnavailable)
	var a vaultv1beta1.VaultApp
	if err := east.op.Client.Get(ctx, onEnv, &a); err != nil {
		t.Fatal(err)
	}
	a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "list"}
	if err := east.op.Client.Update(ctx, &a); err != nil {
		t.Fatal(err)
	}
	east.wait(t, onEnv, metav1.ConditionTrue, vaultv1beta1.ReasonSynced) // for the new generation
	if text := vaultState(t)["policy app.shop.a"]; !strings.Contains(text, `"read", "list"`) {
		t.Fatalf("app.shop.a not updated while the second Vault is down:\n%s", text)
	}

	// Back (a dev server starts empty): b is written again at once.
	if err := second.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	prepare()
	east.wait(t, client.ObjectKeyFromObject(onSecond), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if text, _ := admin2.Sys().GetPolicy("app-second.shop.b"); !strings.Contains(text, `"read", "list"`) {
		t.Fatalf("the second Vault's policy after its return:\n%s", text)
	}
}

// A VaultServer grants a namespace a path outside its KV prefix by
// template: the policy holds it, and the app's workload reads it (a KV
// mount named database stands for the database engine); a path no
// template grants is refused at admission, naming the field and the grant.
func TestGrantedPathOutsideTheKVPrefix(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Sys().Mount("database", &vaultapi.MountInput{Type: "kv"}); err != nil && !strings.Contains(err.Error(), "path is already in use") {
		t.Fatal(err)
	}
	const secret = "granted-path-value-for-the-test"
	harness.KeepSecret(secret)
	if _, err := admin.Logical().Write("database/creds/shop", map[string]any{"password": secret}); err != nil {
		t.Fatal(err)
	}
	s := vaultServerAt("paths", vaultServer.Addr, east.mount)
	s.Spec.Cluster = "east"
	s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}},
		{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read"}},
	}}}
	if err := east.op.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	east.namespace(t, "shop")
	app := func(name, path string) *vaultv1beta1.VaultApp {
		return &vaultv1beta1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec: vaultv1beta1.VaultAppSpec{
				ServerRef: &vaultv1beta1.ServerReference{Name: "paths"},
				Policy: vaultv1beta1.PolicySpec{
					Rules:      []vaultv1beta1.PolicyRule{{Path: name + "/*", Capabilities: []vaultv1beta1.Capability{"read"}}},
					VaultPaths: []vaultv1beta1.VaultPathRule{{Path: path, Capabilities: []vaultv1beta1.Capability{"read"}}},
				},
				KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{name}},
			},
		}
	}
	err = east.op.Client.Create(ctx, app("pki", "pki/issue/shop"))
	NewWithT(t).Expect(err).To(HaveOccurred())
	NewWithT(t).Expect(err.Error()).To(ContainSubstring(`spec.policy.vaultPaths[0]: Forbidden: read on "pki/issue/shop" not granted to namespace "shop" by VaultServer "paths": it grants read on database/creds/shop; read on secret/data/shop/*`))

	db := app("dbapp", "database/creds/shop")
	if err := east.op.Client.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	east.wait(t, client.ObjectKeyFromObject(db), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	// The environment's Vault is this VaultServer's too: its sweep, which
	// runs every second, must leave the VaultServer's policy alone.
	awaitSweeps(t, 2)
	if text := vaultState(t)["policy app.shop.dbapp"]; !strings.Contains(text, "path \"database/creds/shop\" {\n  capabilities = [\"read\"]\n}") {
		t.Fatalf("policy app.shop.dbapp:\n%s", text)
	}
	// The workload logs in with its role and reads the granted path.
	if err := east.op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "dbapp", Namespace: "shop"}}); err != nil {
		t.Fatal(err)
	}
	jwt, err := harness.ServiceAccountToken(ctx, east.op.Config, "shop", "dbapp")
	if err != nil {
		t.Fatal(err)
	}
	login, err := unauthenticated(t).Logical().Write("auth/"+east.mount+"/login", map[string]any{"role": "app.shop.dbapp", "jwt": jwt})
	if err != nil {
		t.Fatal(err)
	}
	harness.KeepSecret(login.Auth.ClientToken)
	workload := unauthenticated(t)
	workload.SetToken(login.Auth.ClientToken)
	read, err := workload.Logical().Read("database/creds/shop")
	if err != nil || read == nil || read.Data["password"] != secret {
		t.Fatalf("the workload's read of the granted path: %v %v", read, err)
	}
	if _, err := workload.Logical().Read("database/creds/other"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the workload read a path not granted: %v", err)
	}
}

// A Vault that cannot reach the cluster's API server: the operator logs in
// through JWT auth with a token of its ServiceAccount requested for the
// server's audience, and writes JWT roles bound to the VaultApp's
// ServiceAccounts and the workloads' audience. The workload logs in with
// a projected token of that audience and reads its granted path; a token
// of another audience, or of another ServiceAccount, is refused.
func TestJWTLoginAndJWTAppRoles(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	const mount, loginAudience, appAudience = "jwt-east", "vko.vault.example.com", "apps.vault.example.com"
	if err := vaultServer.ConfigureJWTAuthAt(ctx, mount, east.op.Config); err != nil {
		t.Fatal(err)
	}
	if err := vaultServer.AllowOperatorJWTAt(ctx, mount, "vault-keycloak-operator-jwt", harness.OperatorVaultJWTPolicyFor(mount, "jwt"),
		operatorNamespace, operatorAccount, loginAudience); err != nil {
		t.Fatal(err)
	}
	s := vaultServerAt("jwt", vaultServer.Addr, mount)
	s.Spec.Login = vaultv1beta1.VaultLogin{JWT: &vaultv1beta1.VaultJWTLogin{
		VaultRoleLogin: vaultv1beta1.VaultRoleLogin{Mount: mount, Role: "vault-keycloak-operator"}, Audience: loginAudience}}
	s.Spec.AppAuth = vaultv1beta1.VaultAuthMethod{JWT: &vaultv1beta1.VaultJWTAuthMount{
		VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: mount}, Audience: appAudience}}
	s.Spec.Cluster, s.Spec.NamePrefix = "east", "jwt"
	s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, MaxTokenTTL: &metav1.Duration{Duration: 2 * time.Hour}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}}
	if err := east.op.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	east.waitServer(t, "jwt", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)

	// Both login methods at once are refused by the schema.
	both := vaultServerAt("both", vaultServer.Addr, mount)
	both.Spec.Login.JWT = s.Spec.Login.JWT
	err := east.op.Client.Create(ctx, both)
	NewWithT(t).Expect(err).To(HaveOccurred())
	NewWithT(t).Expect(err.Error()).To(ContainSubstring("spec.login: Invalid value: set exactly one of kubernetes and jwt"))

	east.namespace(t, "shop")
	for _, sa := range []string{"web", "other"} {
		if err := east.op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: "shop"}}); err != nil {
			t.Fatal(err)
		}
	}
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{
			ServerRef:      &vaultv1beta1.ServerReference{Name: "jwt"},
			Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "web/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"web"}},
		},
	}
	if err := east.op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	east.wait(t, client.ObjectKeyFromObject(app), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	role, err := admin.Logical().Read("auth/" + mount + "/role/app-jwt.shop.web")
	if err != nil || role == nil {
		t.Fatalf("read the JWT role: %v %v", role, err)
	}
	NewWithT(t).Expect(role.Data["role_type"]).To(Equal("jwt"))
	NewWithT(t).Expect(role.Data["bound_audiences"]).To(ConsistOf(appAudience))
	NewWithT(t).Expect(role.Data["bound_claims"]).To(HaveKeyWithValue("sub", ConsistOf("system:serviceaccount:shop:web")))
	// Tokens live an hour (the default), renewed at most to the grant's 2h.
	NewWithT(t).Expect(fmt.Sprint(role.Data["token_ttl"], " ", role.Data["token_max_ttl"])).To(Equal("3600 7200"))

	const secret = "jwt-workload-value-for-the-test"
	harness.KeepSecret(secret)
	if _, err := admin.Logical().Write("secret/data/shop/web/db", map[string]any{"data": map[string]any{"password": secret}}); err != nil {
		t.Fatal(err)
	}
	login := func(sa, audience string) (*vaultapi.Secret, error) {
		t.Helper()
		jwt, err := harness.ServiceAccountTokenFor(ctx, east.op.Config, "shop", sa, audience)
		if err != nil {
			t.Fatal(err)
		}
		return unauthenticated(t).Logical().Write("auth/"+mount+"/login", map[string]any{"role": "app-jwt.shop.web", "jwt": jwt})
	}
	got, err := login("web", appAudience)
	if err != nil {
		t.Fatal(err)
	}
	harness.KeepSecret(got.Auth.ClientToken)
	workload := unauthenticated(t)
	workload.SetToken(got.Auth.ClientToken)
	read, err := workload.Logical().Read("secret/data/shop/web/db")
	if err != nil || read == nil {
		t.Fatalf("the workload's read: %v %v", read, err)
	}
	if data, _ := read.Data["data"].(map[string]any); data["password"] != secret {
		t.Fatal("the workload read another value")
	}
	if _, err := login("web", loginAudience); err == nil || !strings.Contains(err.Error(), "audience claim does not match") {
		t.Fatalf("a token of another audience: %v", err)
	}
	if _, err := login("other", appAudience); err == nil || !strings.Contains(err.Error(), "claim") {
		t.Fatalf("a token of another ServiceAccount: %v", err)
	}

	// Drift made by hand in the role (a wider audience) is repaired.
	if _, err := admin.Logical().Write("auth/"+mount+"/role/app-jwt.shop.web", map[string]any{
		"role_type": "jwt", "user_claim": "sub", "bound_audiences": []string{appAudience, "anyone"},
		"bound_claims": map[string]any{"sub": []string{"system:serviceaccount:shop:web"}}, "token_policies": []string{"app-jwt.shop.web"},
	}); err != nil {
		t.Fatal(err)
	}
	var a vaultv1beta1.VaultApp
	if err := east.op.Client.Get(ctx, client.ObjectKeyFromObject(app), &a); err != nil {
		t.Fatal(err)
	}
	a.Spec.RefreshInterval = &metav1.Duration{Duration: 30 * time.Second}
	if err := east.op.Client.Update(ctx, &a); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() error {
		role, err := admin.Logical().Read("auth/" + mount + "/role/app-jwt.shop.web")
		if err != nil || role == nil {
			return fmt.Errorf("read the JWT role: %v", err)
		}
		if aud := fmt.Sprint(role.Data["bound_audiences"]); aud != "["+appAudience+"]" {
			return fmt.Errorf("bound_audiences %s", aud)
		}
		return nil
	})
}

// Deleting a VaultServer with deletionPolicy Delete removes what this
// cluster wrote there for its VaultApps, and nothing else, before the
// VaultServer goes; the VaultApps then say ServerNotFound. The server is
// the environment's Vault under the same identity: what VaultApps on the
// environment's Vault have live there stays, as does another cluster's.
func TestVaultServerDeletionPolicyDelete(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	s := vaultServerAt("cleaned", vaultServer.Addr, east.mount)
	s.Spec.Cluster, s.Spec.DeletionPolicy = "east", vaultv1beta1.DeletionPolicyDelete
	s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}}
	if err := east.op.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	east.waitServer(t, "cleaned", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
	east.namespace(t, "shop")
	onEnv := east.createApp(t, "shop", "env")
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{
			ServerRef:      &vaultv1beta1.ServerReference{Name: "cleaned"},
			Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "web/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"web"}},
		},
	}
	if err := east.op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	east.wait(t, client.ObjectKeyFromObject(app), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	east.wait(t, onEnv, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	for _, want := range []string{"policy app.shop.web", "role " + east.mount + "/app.shop.web", "policy app.shop.env"} {
		if _, ok := vaultState(t, east.mount)[want]; !ok {
			t.Fatalf("%s not written", want)
		}
	}
	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	other := vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: "9", Cluster: "west"}, nil)
	if err := admin.Sys().PutPolicy("app.shop.api", other); err != nil {
		t.Fatal(err)
	}

	if err := east.op.Client.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		err := east.op.Client.Get(ctx, client.ObjectKey{Name: "cleaned"}, &vaultv1beta1.VaultServer{})
		if err == nil {
			return fmt.Errorf("VaultServer cleaned still there")
		}
		return client.IgnoreNotFound(err)
	})
	state := vaultState(t, east.mount)
	for _, gone := range []string{"policy app.shop.web", "role " + east.mount + "/app.shop.web"} {
		if _, ok := state[gone]; ok {
			t.Fatalf("%s left in Vault", gone)
		}
	}
	for _, kept := range []string{"policy app.shop.env", "role " + east.mount + "/app.shop.env", "policy app.shop.api"} {
		if _, ok := state[kept]; !ok {
			t.Fatalf("%s removed", kept)
		}
	}
	msg := east.wait(t, client.ObjectKeyFromObject(app), metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound)
	NewWithT(t).Expect(msg).To(ContainSubstring("VaultServer cleaned does not exist"))
	east.wait(t, onEnv, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
}

// A VaultApp written to the environment's Vault (as releases before
// VaultServer wrote them) stays there when another VaultServer becomes the
// default, and moves to a VaultServer of the same Location with its policy
// as it was: no removal, no policy write, no LegacyConfiguration after.
func TestALegacyVaultAppMovesToAVaultServerOfTheSameVault(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "east", "")
	east.namespace(t, "shop")
	key := east.createApp(t, "shop", "plain")
	east.wait(t, key, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	var app vaultv1beta1.VaultApp
	harness.Eventually(t, 30*time.Second, func() error {
		if err := east.op.Client.Get(ctx, key, &app); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeLegacyConfiguration); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("LegacyConfiguration %+v", c)
		}
		return nil
	})
	before := vaultState(t, east.mount)
	grant := []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}}}}

	// The default elsewhere (another name prefix): not its Location.
	other := vaultServerAt("other", vaultServer.Addr, east.mount)
	other.Annotations = map[string]string{vaultv1beta1.DefaultServerAnnotation: "true"}
	other.Spec.Cluster, other.Spec.NamePrefix, other.Spec.Access = "east", "other", grant
	if err := east.op.Client.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	east.waitServer(t, "other", metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
	for range 6 { // its pass after the server's event, and the next
		time.Sleep(500 * time.Millisecond)
		if err := east.op.Client.Get(ctx, key, &app); err != nil {
			t.Fatal(err)
		}
		if app.Status.Server != "" {
			t.Fatalf("moved to VaultServer %q, which writes elsewhere", app.Status.Server)
		}
	}

	// Its twin: the same address, auth mount, KV mount and cluster.
	twin := vaultServerAt("vault", vaultServer.Addr+"/", east.mount)
	twin.Spec.Cluster, twin.Spec.Access = "east", grant
	if err := east.op.Client.Create(ctx, twin); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := east.op.Client.Get(ctx, key, &app); err != nil {
			return err
		}
		// The server is recorded before the pass that moves it reports.
		if c := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeLegacyConfiguration); app.Status.Server != "vault" || c != nil {
			return fmt.Errorf("on server %q, LegacyConfiguration %+v", app.Status.Server, c)
		}
		return nil
	})
	east.wait(t, key, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	after := vaultState(t, east.mount)
	NewWithT(t).Expect(after["policy app.shop.plain"]).To(Equal(before["policy app.shop.plain"]), "the policy, rewritten by the move")
	NewWithT(t).Expect(after).To(HaveKey("role " + east.mount + "/app.shop.plain"))
	NewWithT(t).Expect(after).NotTo(HaveKey("policy app-other.shop.plain"))
}
