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

package tenancy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Forged Secrets: how many, and how large each one's data is.
const (
	forgedSecrets    = 300
	forgedSecretSize = 256 << 10
	// rssAllowance is what the forged Secrets may add to the manager's
	// memory: their data is 75 MiB, which a cache holding values would
	// add whole (and more, decoded).
	rssAllowance = 24 << 20
)

// TestForgedSecretsCostTheManagerNothing: a tenant creates 300 Secrets of
// 256 KiB each in her namespace, all carrying the operator's labels (which
// put them in the manager's cache). The manager's resident memory — the
// manager binary as users deploy it, on its own control plane — must not
// grow by their data.
func TestForgedSecretsCostTheManagerNothing(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "vko-forged-")
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := harness.StartProcessCluster(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	const ns, mallory = "forger", "mallory"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		// What "edit" gives on Secrets (the built-in role is aggregated by
		// kube-controller-manager, which this control plane does not run).
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "secrets-editor"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "get", "list", "update", "delete"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mallory-edit"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secrets-editor"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: mallory}}},
	} {
		if err := cluster.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	m, err := cluster.StartManager(ctx, "forged", nil, "--operator-namespace="+operatorNamespace)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	// Leader: its controllers, and the cache of Secrets they watch, run.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if holder, _ := harness.LeaderLeaseHolder(ctx, cluster.Client, operatorNamespace); holder != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the manager did not become leader")
		}
	}
	time.Sleep(5 * time.Second) // caches synced, start-up garbage collected
	before, err := m.RSS()
	if err != nil {
		t.Fatal(err)
	}

	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: mallory}
	forger, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(4)
	for i := range forgedSecrets {
		g.Go(func() error {
			return forger.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("forged-%03d", i), Labels: map[string]string{
					"app.kubernetes.io/managed-by": "vault-keycloak-operator", "secrets.carbogame.com/owner-namespace": ns,
					"secrets.carbogame.com/owner-name": "nobody",
				}},
				Data: map[string][]byte{"blob": bytes.Repeat([]byte{byte(i)}, forgedSecretSize)},
			})
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("the tenant's Secrets: %v", err)
	}
	time.Sleep(10 * time.Second) // every watch event delivered and cached
	after, err := m.RSS()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("manager RSS %d MiB before, %d MiB after %d forged Secrets of %d KiB", before>>20, after>>20, forgedSecrets, forgedSecretSize>>10)
	if grown := after - before; grown > rssAllowance {
		t.Fatalf("the manager's RSS grew by %d MiB (allowed %d MiB): the cache holds the forged Secrets' data", grown>>20, rssAllowance>>20)
	}
}
