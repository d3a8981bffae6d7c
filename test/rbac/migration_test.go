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

package rbac

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
)

// migrateAsServiceAccount marks every CRD as still holding v1alpha1
// objects (as after an upgrade) and runs the migrator as the CSV's
// ServiceAccount with --storage-migration=auto. No storage-version-migrator
// controller runs here, so each CRD goes through both paths: its
// StorageVersionMigration is created, read, found untaken and deleted
// (builtin), then the objects are rewritten, storedVersions trimmed and
// managedFields listed (operator).
func migrateAsServiceAccount(t *testing.T, strategy v1alpha1.StrategyDetailsDeployment) ([]migration.Result, error) {
	t.Helper()
	ctx := context.Background()
	runs := func() float64 {
		var n float64
		for _, crd := range manager.OwnedCRDs {
			n += migration.RunCount(crd, "up_to_date") + migration.RunCount(crd, "migrated") + migration.RunCount(crd, "failed")
		}
		return n
	}
	before := runs()
	op := startAsServiceAccount(t, strategy)
	// The manager's own migration on start is over before the CRDs are
	// marked: the run below is the only one to see them so.
	NewWithT(t).Eventually(runs).WithTimeout(30 * time.Second).Should(BeNumerically(">=", before+float64(len(manager.OwnedCRDs))))
	ns := op.NewNamespace(t, nil)
	app := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}, Spec: vaultv1beta1.VaultAppSpec{
		Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}}}
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	for _, name := range manager.OwnedCRDs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := op.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Fatal(err)
		}
		crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
		if err := op.Client.Status().Update(ctx, &crd); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(op.Config)
	cfg.Impersonate = serviceAccountIdentity(strategy.ClusterPermissions[0].ServiceAccountName)
	asSA, err := client.New(cfg, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	m := &migration.Migrator{Client: asSA, Log: logr.Discard(), Path: migration.PathAuto, BuiltinStartTimeout: time.Second}
	return m.Migrate(ctx, manager.OwnedCRDs...)
}

func TestCSVPermissionsAreEnoughForBothMigrationPaths(t *testing.T) {
	results, err := migrateAsServiceAccount(t, csvStrategy(t))
	if err != nil {
		t.Fatalf("migration as the ServiceAccount: %v", err)
	}
	for _, r := range results {
		if r.Path != migration.PathOperator || r.UpToDate {
			t.Fatalf("%s: %+v; want a fallback to the operator's rewrites after the StorageVersionMigration", r.CRD, r)
		}
	}
	if results[0].Migrated != 1 {
		t.Fatalf("VaultApps rewritten: %d, want 1", results[0].Migrated)
	}
}

// Without create on storageversionmigrations, the built-in path is refused
// (and auto does not pretend it was taken): the test above has teeth.
func TestWithoutCreatingStorageVersionMigrationsTheBuiltinPathFails(t *testing.T) {
	strategy := csvStrategy(t)
	removed := false
	for i, rule := range strategy.ClusterPermissions[0].Rules {
		if slices.Contains(rule.Resources, "storageversionmigrations") && slices.Contains(rule.Verbs, "create") {
			strategy.ClusterPermissions[0].Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "create" })
			removed = true
		}
	}
	if !removed {
		t.Fatal("the CSV grants no create on storageversionmigrations: nothing to remove")
	}
	_, err := migrateAsServiceAccount(t, strategy)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("err = %v, want the API server's refusal to create the StorageVersionMigration", err)
	}
}
