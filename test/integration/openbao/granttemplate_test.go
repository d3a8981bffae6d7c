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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// A grant template of a VaultServer in one OpenBao namespace that names
// another namespace's path (team-west/secret/...) yields a policy inside
// its own namespace, where that path is a child of its own: the workload's
// token reads nothing of the other namespace, through either namespace.
func TestAGrantTemplateStaysInItsNamespace(t *testing.T) {
	ctx := context.Background()
	east := startCluster(t, "tmpl-east", "tmpl-east")
	west := startCluster(t, "tmpl-west", "tmpl-west")
	const secret = "west-secret-a-template-must-not-reach"
	harness.KeepSecret(secret)
	if _, err := west.admin(t).KVv2("secret").Put(ctx, "shop/api/config", map[string]any{"dsn": secret}); err != nil {
		t.Fatal(err)
	}

	// The admin of east grants a template that names west's path.
	var server vaultv1beta1.VaultServer
	if err := east.op.Client.Get(ctx, client.ObjectKey{Name: "openbao"}, &server); err != nil {
		t.Fatal(err)
	}
	server.Spec.Access[0].Paths = append(server.Spec.Access[0].Paths,
		vaultv1beta1.VaultPathGrant{Template: "tmpl-west/secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read"}})
	if err := east.op.Client.Update(ctx, &server); err != nil {
		t.Fatal(err)
	}
	const reach = "tmpl-west/secret/data/shop/api/config"
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "reach", Namespace: appNamespace},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy: vaultv1beta1.PolicySpec{
				Rules:      []vaultv1beta1.PolicyRule{{Path: "reach/*", Capabilities: []vaultv1beta1.Capability{"read"}}},
				VaultPaths: []vaultv1beta1.VaultPathRule{{Path: reach, Capabilities: []vaultv1beta1.Capability{"read"}}},
			},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"reach"}},
		},
	}
	for _, obj := range []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reach", Namespace: appNamespace}}, app} {
		if err := east.op.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	harness.WaitCondition(t, east.op, client.ObjectKeyFromObject(app), func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions },
		vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 30*time.Second)
	if text := policy(t, east.admin(t), "app.shop.reach"); !strings.Contains(text, `path "`+reach+`"`) {
		t.Fatalf("policy app.shop.reach in tmpl-east:\n%s", text)
	}
	if text := policy(t, west.admin(t), "app.shop.reach"); text != "" {
		t.Fatalf("policy app.shop.reach written into tmpl-west:\n%s", text)
	}

	jwt, err := harness.ServiceAccountToken(ctx, east.op.Config, appNamespace, "reach")
	if err != nil {
		t.Fatal(err)
	}
	workload, err := vaultapi.NewClient(&vaultapi.Config{Address: bao.Addr})
	if err != nil {
		t.Fatal(err)
	}
	workload.SetNamespace("tmpl-east")
	login, err := workload.Logical().WriteWithContext(ctx, "auth/kubernetes/login", map[string]any{"role": "app.shop.reach", "jwt": jwt})
	if err != nil || login == nil || login.Auth == nil {
		t.Fatalf("the workload's login in tmpl-east: %v", err)
	}
	harness.KeepSecret(login.Auth.ClientToken)
	workload.SetToken(login.Auth.ClientToken)
	// In its own namespace the path is tmpl-east/tmpl-west/secret/...: no
	// such mount; from the root, the token is not one of the root's; in
	// tmpl-west, it is no token of that namespace.
	for _, ns := range []string{"tmpl-east", "", "tmpl-west"} {
		workload.SetNamespace(ns)
		path := reach
		if ns == "tmpl-west" {
			path = "secret/data/shop/api/config"
		}
		read, err := workload.Logical().ReadWithContext(ctx, path)
		if err == nil && read != nil && strings.Contains(fmt.Sprint(read.Data), secret) {
			t.Errorf("the workload of tmpl-east read tmpl-west's secret at %q in namespace %q through its grant template", path, ns)
		}
	}
}
