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
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The policy and role of VaultApp shop/api, in whichever namespace.
const appPolicy = "app.shop.api"

// OpenBao as a VaultServer: Connected with its version; a VaultApp's policy
// and role written, an edit made by hand repaired, both removed on delete.
func TestOpenBaoIsAVaultServer(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, "root", "")
	server := harness.WaitCondition(t, c.op, client.ObjectKey{Name: "openbao"}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
		vaultv1beta1.TypeConnected, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, 30*time.Second)
	if server.Status.Product != "OpenBao" || !strings.HasPrefix(server.Status.Version, "2.7.2") {
		t.Errorf("VaultServer status: product %q, version %q, want OpenBao 2.7.2", server.Status.Product, server.Status.Version)
	}
	app := c.createApp(t)
	admin := c.admin(t)
	if text := policy(t, admin, appPolicy); !strings.Contains(text, `path "secret/data/shop/api/*"`) {
		t.Fatalf("policy %s in OpenBao:\n%s", appPolicy, text)
	}
	role, err := admin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+appPolicy)
	if err != nil || role == nil {
		t.Fatalf("role %s in OpenBao: %v, %v", appPolicy, role, err)
	}

	// Drift made by hand, repaired at the request's pass.
	if err := admin.Sys().PutPolicyWithContext(ctx, appPolicy, `path "secret/*" { capabilities = ["read"] }`); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations = map[string]string{vaultv1beta1.RefreshRequestAnnotation: "repair-1"}
	if err := c.op.Client.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if text := policy(t, admin, appPolicy); !strings.Contains(text, `path "secret/data/shop/api/*"`) || strings.Contains(text, `path "secret/*"`) {
			return fmt.Errorf("policy %s not repaired:\n%s", appPolicy, text)
		}
		return nil
	})

	if err := c.op.Client.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if text := policy(t, admin, appPolicy); text != "" {
			return fmt.Errorf("policy %s still in OpenBao after the VaultApp's deletion", appPolicy)
		}
		if role, err := admin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+appPolicy); err != nil || role != nil {
			return fmt.Errorf("role %s still in OpenBao after the VaultApp's deletion (%v)", appPolicy, err)
		}
		return nil
	})

	// The operator's own login, as a thief of its token would use it: the
	// admin's policy lets it write one app.* policy into a role, no other.
	operator, err := vaultapi.NewClient(&vaultapi.Config{Address: bao.Addr})
	if err != nil {
		t.Fatal(err)
	}
	login, err := operator.Logical().WriteWithContext(ctx, "auth/kubernetes/login", map[string]any{"role": "vault-keycloak-operator", "jwt": c.operatorToken})
	if err != nil || login == nil || login.Auth == nil {
		t.Fatalf("the operator's login: %v", err)
	}
	harness.KeepSecret(login.Auth.ClientToken)
	operator.SetToken(login.Auth.ClientToken)
	for _, policies := range []any{"app.shop.api,root", []string{"app.shop.api", "root"}, "root"} {
		_, err := operator.Logical().WriteWithContext(ctx, "auth/kubernetes/role/app.shop.thief", map[string]any{
			"bound_service_account_names": []string{"api"}, "bound_service_account_namespaces": []string{"shop"}, "token_policies": policies})
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("the operator's token wrote a role with token_policies %v: %v", policies, err)
		}
	}
}

// Two clusters, each with a VaultServer in its own OpenBao namespace of one
// server: the same VaultApp in both is two policies and two roles, each in
// its namespace and nowhere else; the status tells the workload its
// namespace; the workload logs in through its namespace's auth mount and
// reads its secret there, not in the other namespace; one cluster's
// deletion and orphan sweep leave the other's alone, though both clusters
// bear one name and write the same marks.
func TestVaultNamespacesKeepTwoClustersApart(t *testing.T) {
	ctx := context.Background()
	// One cluster name for both: their marks in OpenBao are the same, so
	// only the namespace keeps each one's sweep and cleanup off the other's.
	east := startClusterNamed(t, "east", "prod", "team-east")
	west := startClusterNamed(t, "west", "prod", "team-west")
	eastApp, westApp := east.createApp(t), west.createApp(t)
	// Each server is Connected through its namespace: OpenBao answers its
	// health only outside namespaces, and a check that sent the header
	// there left both servers unready while their VaultApps were written.
	for _, c := range []*cluster{east, west} {
		harness.WaitCondition(t, c.op, client.ObjectKey{Name: "openbao"}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
			vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, 30*time.Second)
	}
	for _, c := range []struct {
		name string
		app  *vaultv1beta1.VaultApp
	}{{"team-east", eastApp}, {"team-west", westApp}} {
		if got := c.app.Status.Vault; got == nil || got.Namespace != c.name || got.LoginPath != "auth/kubernetes/login" {
			t.Errorf("VaultApp status.vault in %s: %+v, want namespace %s and the login path", c.name, got, c.name)
		}
	}
	eastAdmin, westAdmin := east.admin(t), west.admin(t)
	root, err := bao.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	for name, admin := range map[string]*vaultapi.Client{"team-east": eastAdmin, "team-west": westAdmin} {
		if text := policy(t, admin, appPolicy); !strings.Contains(text, `path "secret/data/shop/api/*"`) {
			t.Errorf("policy %s in namespace %s:\n%s", appPolicy, name, text)
		}
	}
	if text := policy(t, root, appPolicy); text != "" {
		t.Errorf("policy %s in OpenBao's root namespace: written outside the VaultServers' namespaces", appPolicy)
	}

	// The workload of east logs in through team-east's mount and reads its
	// secret; the same token reads nothing of team-west's.
	if _, err := eastAdmin.KVv2("secret").Put(ctx, "shop/api/config", map[string]any{"dsn": "east"}); err != nil {
		t.Fatal(err)
	}
	if _, err := westAdmin.KVv2("secret").Put(ctx, "shop/api/config", map[string]any{"dsn": "west"}); err != nil {
		t.Fatal(err)
	}
	jwt, err := harness.ServiceAccountToken(ctx, east.op.Config, appNamespace, "api")
	if err != nil {
		t.Fatal(err)
	}
	workload, err := vaultapi.NewClient(&vaultapi.Config{Address: bao.Addr})
	if err != nil {
		t.Fatal(err)
	}
	workload.SetNamespace(eastApp.Status.Vault.Namespace)
	login, err := workload.Logical().WriteWithContext(ctx, eastApp.Status.Vault.LoginPath, map[string]any{"role": eastApp.Status.Vault.Role, "jwt": jwt})
	if err != nil || login == nil || login.Auth == nil {
		t.Fatalf("the workload's login at %s in %s: %v", eastApp.Status.Vault.LoginPath, eastApp.Status.Vault.Namespace, err)
	}
	harness.KeepSecret(login.Auth.ClientToken)
	workload.SetToken(login.Auth.ClientToken)
	secret, err := workload.KVv2("secret").Get(ctx, "shop/api/config")
	if err != nil || secret.Data["dsn"] != "east" {
		t.Fatalf("the workload reads its secret in team-east: %v, %v", secret, err)
	}
	workload.SetNamespace("team-west")
	if _, err := workload.KVv2("secret").Get(ctx, "shop/api/config"); err == nil {
		t.Errorf("the workload of team-east read team-west's secret with its token")
	}

	// East's VaultApp goes: its policy and role in team-east go, west's stay.
	if err := east.op.Client.Delete(ctx, eastApp); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if text := policy(t, eastAdmin, appPolicy); text != "" {
			return fmt.Errorf("policy %s still in team-east", appPolicy)
		}
		return nil
	})
	// Three of east's sweeps later (one a second), west's are still there.
	time.Sleep(3 * time.Second)
	if text := policy(t, westAdmin, appPolicy); text == "" {
		t.Errorf("east's deletion or sweep removed policy %s from team-west", appPolicy)
	}
	if role, err := westAdmin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+appPolicy); err != nil || role == nil {
		t.Errorf("east's deletion removed role %s from team-west: %v", appPolicy, err)
	}
}
