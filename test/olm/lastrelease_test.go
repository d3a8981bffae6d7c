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

package olm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The last release, as hack/versions.env pins it: its bundle is frozen in
// release/bundles, its manager built from its commit (hack/ensure.sh
// last-release).
const (
	lastVersion = "0.1.0"
	lastCSV     = packageName + ".v" + lastVersion
)

// legacyApps are the VaultApps the last release wrote, in namespace shop,
// granted by its annotation as the last release's README said.
var legacyApps = []string{"shop-api", "shop-batch"}

// TestUpgradeFromTheLastReleaseNeedsNoStep installs the last release as
// its README said (VAULT_ADDR on the Subscription, grants by namespace
// annotation), runs its own manager, and has workloads log in to Vault
// and read their secrets throughout. OLM then upgrades to this code with
// nothing set beforehand: every VaultApp stays Ready, says
// LegacyConfiguration with one Warning. The admin follows
// docs/upgrading.md as written: a VaultServer for the same Vault takes the
// VaultApps over. No login fails at any point, Vault's audit log shows no
// policy or role removed and no policy written by the move, and every
// VaultApp is the one created under the last release.
func TestUpgradeFromTheLastReleaseNeedsNoStep(t *testing.T) {
	lastManager := os.Getenv("VKO_LAST_RELEASE_MANAGER")
	if _, err := os.Stat(lastManager); err != nil {
		t.Fatalf("the last release's manager: VKO_LAST_RELEASE_MANAGER=%q: %v; run 'make test', which builds it (hack/ensure.sh last-release)", lastManager, err)
	}
	e := newEnv(t)
	ctx := context.Background()

	// The last release, installed as its README said.
	released := filepath.Join(harness.RepoRoot(), "release", "bundles", lastVersion)
	e.subscribe(t, e.writeCatalog(t, catalogEntry{csv: lastCSV, dir: released}),
		&operatorsv1alpha1.SubscriptionConfig{Env: []corev1.EnvVar{{Name: "VAULT_ADDR", Value: e.vault.Addr}}})
	csv := waitCSV(t, e.c, e.cluster, lastCSV, 3*time.Minute)
	waitPlanComplete(t, e.c, lastCSV)
	sa := csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].ServiceAccountName
	if err := e.vault.ConfigureKubernetesAuth(ctx, e.c, e.cluster.Config); err != nil {
		t.Fatal(err)
	}
	if err := e.vault.AllowOperator(ctx, installNamespace, sa); err != nil {
		t.Fatal(err)
	}
	e.startManagerBinary(t, csv, lastManager)
	e.legacyApps(t)

	// Workloads log in and read from here to the end.
	admin, err := e.vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	var consumers []*harness.VaultConsumer
	for _, name := range legacyApps {
		if _, err := admin.Logical().WriteWithContext(ctx, "secret/data/shop/db/"+name, map[string]any{"data": map[string]any{"password": "change-me"}}); err != nil {
			t.Fatal(err)
		}
		c, err := harness.StartVaultConsumer(ctx, harness.VaultConsumerOptions{
			Vault: e.vault, Config: e.cluster.Config, Namespace: "shop", ServiceAccount: name,
			LoginPath: "auth/kubernetes/login", Role: "app.shop." + name, Read: "secret/data/shop/db/" + name, Every: 200 * time.Millisecond,
		})
		if err != nil {
			t.Fatalf("workload %s under the last release: %v", name, err)
		}
		defer c.Stop()
		consumers = append(consumers, c)
	}
	auditLog := filepath.Join(e.dir, "vault-audit.log")
	if err := e.vault.EnableAudit(ctx, auditLog); err != nil {
		t.Fatal(err)
	}
	uids := map[string]types.UID{}
	for _, name := range legacyApps {
		uids[name] = getVaultApp(t, e.c, name).GetUID()
	}

	// OLM upgrades to this code; nothing was set beforehand.
	e.serveCatalog(t, e.writeCatalog(t, catalogEntry{csv: lastCSV, dir: released},
		catalogEntry{csv: firstCSV, replaces: lastCSV, dir: filepath.Join(harness.RepoRoot(), "bundle")}))
	csv = waitCSV(t, e.c, e.cluster, firstCSV, 4*time.Minute)
	waitPlanComplete(t, e.c, firstCSV)
	waitGone(t, e.c, &operatorsv1alpha1.ClusterServiceVersion{}, client.ObjectKey{Namespace: installNamespace, Name: lastCSV})
	e.manager.Stop()
	e.startManager(t, csv)
	for _, name := range legacyApps {
		e.waitVaultApp(t, name, func(app *unstructured.Unstructured) error {
			if c := condition(app, "Ready"); c["status"] != "True" || c["observedGeneration"] != app.GetGeneration() {
				return fmt.Errorf("Ready %v", c)
			}
			if c := condition(app, "LegacyConfiguration"); c["status"] != "True" {
				return fmt.Errorf("LegacyConfiguration %v", c)
			}
			return nil
		})
	}
	_, atMove, err := harness.VaultAudit(auditLog, 0)
	if err != nil {
		t.Fatal(err)
	}

	// The admin's part, as docs/upgrading.md has it.
	dir := t.TempDir()
	bin := filepath.Join(dir, ".bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	shell, err := harness.NewDocShell(dir, []string{"KUBECONFIG=" + e.cluster.Kubeconfig}, bin)
	if err != nil {
		t.Fatal(err)
	}
	shell.Placeholders = map[string]string{"https://vault.vault.svc:8200": e.vault.Addr}
	blocks := docBlocks(t, "docs/upgrading.md")
	out, err := shell.Run(ctx, blocks[0], time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range legacyApps {
		if !strings.Contains(out, "shop/"+name+"\n") || !strings.Contains(out, "read,list") {
			t.Errorf("the listing of docs/upgrading.md step 2 lacks shop/%s or the namespace's grant:\n%s", name, out)
		}
	}
	runBlocks(t, e, shell, blocks[1:], nil)

	for _, name := range legacyApps {
		app := getVaultApp(t, e.c, name)
		if server, _, _ := unstructured.NestedString(app.Object, "status", "server"); server != "vault" {
			t.Errorf("VaultApp %s on server %q after the move, want vault", name, server)
		}
		if c := condition(app, "LegacyConfiguration"); c != nil {
			t.Errorf("VaultApp %s still says LegacyConfiguration: %v", name, c)
		}
		if c := condition(app, "Ready"); c["status"] != "True" {
			t.Errorf("VaultApp %s after the move: Ready %v", name, c)
		}
		if app.GetUID() != uids[name] {
			t.Errorf("VaultApp %s was recreated (UID %s, was %s)", name, app.GetUID(), uids[name])
		}
		if n := legacyWarnings(t, e.c, name); n != 1 {
			t.Errorf("VaultApp %s: %d LegacyConfiguration Warnings, want 1", name, n)
		}
	}
	// The workloads keep logging in a moment longer on the moved roles.
	time.Sleep(2 * time.Second)
	for i, c := range consumers {
		c.Stop()
		if c.Failures.Load() > 0 || c.Logins.Load() < 20 {
			t.Errorf("workload %s: %d of %d logins and reads failed (first: %v)", legacyApps[i], c.Failures.Load(), c.Logins.Load(), c.FirstFailure.Load())
		}
	}
	all, _, err := harness.VaultAudit(auditLog, 0)
	if err != nil {
		t.Fatal(err)
	}
	moved, _, err := harness.VaultAudit(auditLog, atMove)
	if err != nil {
		t.Fatal(err)
	}
	logins := 0
	for _, a := range all {
		if a.Request.Path == "auth/kubernetes/login" {
			logins++
		}
		if a.Removes() {
			t.Errorf("Vault's audit log: %s %s during the upgrade", a.Request.Operation, a.Request.Path)
		}
	}
	if logins < 20 {
		t.Errorf("Vault's audit log holds %d of the workloads' logins: not the log of this Vault", logins)
	}
	for _, a := range moved {
		if a.WritesPolicy() {
			t.Errorf("Vault's audit log: the move to the VaultServer wrote %s", a.Request.Path)
		}
	}
	t.Run("no secret value in the manager's log", e.checkLogs)
}

// legacyApps creates the VaultApps the last release wrote, in namespace
// shop, granted by the annotation of its README, and waits for them.
func (e *env) legacyApps(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop",
		Annotations: map[string]string{"vault.exemple.com/allowed-capabilities": "read,list"}}}
	if err := e.c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, name := range legacyApps {
		if err := e.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}}); err != nil {
			t.Fatal(err)
		}
		app := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "vault.exemple.com/v1beta1", "kind": "VaultApp",
			"metadata": map[string]any{"name": name, "namespace": "shop"},
			"spec": map[string]any{
				"policy":         map[string]any{"rules": []any{map[string]any{"path": "db/*", "capabilities": []any{"read", "list"}}}},
				"kubernetesAuth": map[string]any{"serviceAccounts": []any{name}},
			},
		}}
		if err := e.c.Create(ctx, app); err != nil {
			t.Fatalf("create VaultApp %s under the last release: %v\nmanager log:\n%s", name, err, e.manager.LogTail(20))
		}
	}
	for _, name := range legacyApps {
		e.waitVaultApp(t, name, func(app *unstructured.Unstructured) error {
			if c := condition(app, "Ready"); c["status"] != "True" {
				return fmt.Errorf("Ready %v", c)
			}
			return nil
		})
	}
}

// waitVaultApp waits for the VaultApp shop/name to pass check.
func (e *env) waitVaultApp(t *testing.T, name string, check func(*unstructured.Unstructured) error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := check(getVaultApp(t, e.c, name))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VaultApp shop/%s: %v\nmanager log:\n%s", name, err, e.manager.LogTail(30))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func getVaultApp(t *testing.T, c client.Client, name string) *unstructured.Unstructured {
	t.Helper()
	app := &unstructured.Unstructured{}
	app.SetAPIVersion("vault.exemple.com/v1beta1")
	app.SetKind("VaultApp")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: name}, app); err != nil {
		t.Fatalf("VaultApp shop/%s: %v", name, err)
	}
	return app
}

// condition is the condition of that type in an object's status; nil when
// it has none.
func condition(obj *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// legacyWarnings counts the LegacyConfiguration Warnings of VaultApp
// shop/name.
func legacyWarnings(t *testing.T, c client.Client, name string) int {
	t.Helper()
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace("shop")); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range events.Items {
		if ev.InvolvedObject.Kind == "VaultApp" && ev.InvolvedObject.Name == name && ev.Reason == "LegacyConfiguration" && ev.Type == corev1.EventTypeWarning {
			n++
		}
	}
	return n
}
