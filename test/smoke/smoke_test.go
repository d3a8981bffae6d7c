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

// Package smoke proves that every real component the tests stand on answers:
// a kube-apiserver with etcd, a Vault server and a Keycloak server. It fails,
// never skips, when one is missing.
package smoke

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func TestControlPlaneServesNamespaces(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run 'make test', which builds kube-apiserver and etcd and sets it")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "smoke"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	var got corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: "smoke"}, &got); err != nil {
		t.Fatalf("read namespace back: %v", err)
	}
	if got.UID == "" {
		t.Fatal("namespace read back without a UID: not stored by the API server")
	}
}

func TestVaultStoresPolicies(t *testing.T) {
	v, err := harness.VaultFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg := vaultapi.DefaultConfig()
	cfg.Address = v.Addr
	vc, err := vaultapi.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vc.SetToken(v.Token)

	const rules = "path \"secret/data/smoke/*\" {\n  capabilities = [\"read\"]\n}\n"
	if err := vc.Sys().PutPolicy("smoke", rules); err != nil {
		t.Fatalf("write policy: %v", err)
	}
	t.Cleanup(func() { _ = vc.Sys().DeletePolicy("smoke") })
	got, err := vc.Sys().GetPolicy("smoke")
	if err != nil {
		t.Fatalf("read policy: %v", err)
	}
	if got != rules {
		t.Fatalf("policy read back = %q, want %q", got, rules)
	}
}

func TestKeycloakServesMasterRealm(t *testing.T) {
	k, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc := gocloak.NewClient(k.URL)
	token, err := kc.LoginAdmin(ctx, k.User, k.Password, "master")
	if err != nil {
		t.Fatalf("log in to Keycloak as the bootstrap admin: %v", err)
	}
	realm, err := kc.GetRealm(ctx, token.AccessToken, "master")
	if err != nil {
		t.Fatalf("read the master realm: %v", err)
	}
	if gocloak.PString(realm.Realm) != "master" {
		t.Fatalf("realm = %q, want master", gocloak.PString(realm.Realm))
	}
}
