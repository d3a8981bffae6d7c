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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Kubernetes-auth roles bind an audience: by default the cluster's own
// tokens' (a pod's mounted token logs in), so a token the workload minted
// for another service is refused; with appAuth.kubernetes.audience vault
// the role is rewritten to take tokens of that audience alone, and the
// VaultApp's status says which.
func TestKubernetesRolesBindTheAudience(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, "aud", "aud")
	c.sharedServer(t, "aud", "aud", "", "secret/data/{namespace}/*")
	c.namespace(t, "shop")
	key := c.serverApp(t, "api")
	c.wait(t, key, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	login := func(audience string) error {
		jwt, err := harness.ServiceAccountTokenFor(ctx, c.op.Config, "shop", "api", audience)
		if err != nil {
			t.Fatal(err)
		}
		got, err := unauthenticated(t).Logical().Write("auth/"+c.mount+"/login", map[string]any{"role": "app-aud.shop.api", "jwt": jwt})
		if err == nil {
			harness.KeepSecret(got.Auth.ClientToken)
		}
		return err
	}
	own := issuerOf(t, workloadToken(t, c, "shop", "api", "")) // envtest's tokens carry their issuer as audience
	var app vaultv1beta1.VaultApp
	if err := c.op.Client.Get(ctx, key, &app); err != nil {
		t.Fatal(err)
	}
	if app.Status.Vault == nil || app.Status.Vault.Audience != own {
		t.Fatalf("status.vault %+v: want the cluster's own audience %q", app.Status.Vault, own)
	}
	if err := login(""); err != nil {
		t.Fatalf("the cluster's own token (a pod's mounted one): %v", err)
	}
	if err := login("other-service"); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("a token minted for another service: %v; want refused on its audience", err)
	}

	// The admin names the audience: the role takes it on at once.
	var s vaultv1beta1.VaultServer
	if err := c.op.Client.Get(ctx, client.ObjectKey{Name: "shared"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Spec.AppAuth.Kubernetes.Audience = "vault"
	if err := c.op.Client.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.op.Client.Get(ctx, key, &app); err != nil {
			return err
		}
		if app.Status.Vault == nil || app.Status.Vault.Audience != "vault" {
			return fmt.Errorf("status.vault %+v", app.Status.Vault)
		}
		if err := login("vault"); err != nil {
			return fmt.Errorf("a token of audience vault: %v", err)
		}
		return nil
	})
	if err := login(""); err == nil {
		t.Fatal("the cluster's own token still logs in where the role binds vault")
	}
}
