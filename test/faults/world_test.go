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

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// world is a fault test's own control plane (with the webhooks pointed at
// manager processes) and its own Vault dev server: the shared Vault's
// Kubernetes auth is configured by other suites running at the same time,
// and a fault test restarts or cuts what it uses.
type world struct {
	c         client.Client
	cluster   *harness.ProcessCluster
	vault     *harness.Vault
	tokenPath string
}

// newWorld starts both and does the admins' part: Kubernetes auth, the
// operator's policy and role, its ServiceAccount token, namespace "team".
func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, harness.StartVault)
}

// newWorldWith is newWorld with a Vault of startVault's kind (a persistent
// one survives a restart).
func newWorldWith(t *testing.T, startVault func(context.Context, string) (*harness.Vault, error)) *world {
	t.Helper()
	return newWorldOf(t, startVault, harness.ClusterOptions{})
}

// newWorldOf is newWorldWith with a cluster as opts say.
func newWorldOf(t *testing.T, startVault func(context.Context, string) (*harness.Vault, error), opts harness.ClusterOptions) *world {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	vault, err := startVault(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vault.Stop)
	cluster, err := harness.StartProcessClusterWith(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	c := cluster.Client
	if err := vault.ConfigureKubernetesAuth(ctx, c, cluster.Config); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	tokenPath, _, err := harness.OperatorIdentity(ctx, c, cluster.Config, vault, operatorNamespace, operatorSA, dir)
	if err != nil {
		t.Fatal(err)
	}
	return &world{c: c, cluster: cluster, vault: vault, tokenPath: tokenPath}
}

// startManager runs one manager process, leader, speaking to Vault at
// vaultAddr.
func (w *world) startManager(t *testing.T, name, vaultAddr string, extra ...string) *harness.Manager {
	t.Helper()
	m, err := w.cluster.StartManager(context.Background(), name, []string{"VAULT_ADDR=" + vaultAddr},
		append([]string{"--operator-namespace=" + operatorNamespace, "--vault-service-account-token-path=" + w.tokenPath}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withKeycloak does the admin's part in the shared Keycloak (with a
// manager serving the webhooks): a realm with
// clients <prefix>-00…, an operator client, its credentials Secret, and
// KeycloakServer "sso" granting namespaces the clients. The operator
// reaches Keycloak through the returned Link, for the test to cut. It
// returns the clients' secrets by clientId.
func (w *world) withKeycloak(t *testing.T, realm, prefix string, clients int, namespaces ...string) (*harness.Link, map[string]string) {
	t.Helper()
	ctx := context.Background()
	kc, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateRealm(ctx, realm); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{}
	for i := range clients {
		id := fmt.Sprintf("%s-%02d", prefix, i)
		if err := admin.CreateClient(ctx, realm, id, ""); err != nil {
			t.Fatal(err)
		}
		// In use for a while: a rotation may follow at once.
		if err := admin.AgeSecret(ctx, realm, id, time.Hour); err != nil {
			t.Fatal(err)
		}
		if secrets[id], err = admin.ClientSecret(ctx, realm, id); err != nil {
			t.Fatal(err)
		}
	}
	operatorClient := "vko-" + realm
	operatorSecret, err := admin.CreateOperatorClient(ctx, operatorClient, realm)
	if err != nil {
		t.Fatal(err)
	}
	link, err := harness.StartLink(strings.TrimPrefix(kc.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keycloak-credentials", Namespace: operatorNamespace},
			StringData: map[string]string{"clientId": operatorClient, "clientSecret": operatorSecret}},
		&secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "sso"}, Spec: secretsv1beta1.KeycloakServerSpec{
			URL: "http://" + link.Addr, Realm: "master", AuthType: secretsv1beta1.AuthClientCredentials,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-credentials"},
			Access:               []secretsv1beta1.AccessGrant{{Namespaces: namespaces, Realms: []string{realm}, ClientIDs: []string{prefix + "-*"}}},
		}},
	} {
		if err := w.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return link, secrets
}
