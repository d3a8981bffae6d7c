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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	ctx := context.Background()
	dir := t.TempDir()
	vault, err := harness.StartVault(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vault.Stop)
	cluster, err := harness.StartProcessCluster(dir)
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
