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

package migration_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const operatorNamespace = "vko-system"

// R9 and issue 16: the upgrade of a cluster holding 1,000 objects stored
// as v1alpha1, the manager binary migrating them on start, SIGKILLed
// midway, and started again; once by each path:
//   - builtin: kube-controller-manager runs its storage-version-migrator
//     (and the garbage collector it needs); the manager
//     (--storage-migration=builtin) creates a StorageVersionMigration per
//     CRD and is killed while waiting for one; started again, it finds it
//     (or replaces it if it failed without the conversion webhook);
//   - operator: no migrator controller runs; the manager
//     (--storage-migration=auto) sees its StorageVersionMigration taken up
//     by nobody, falls back to its own rewrites, and is killed midway
//     through the second CRD.
//
// Throughout, a CRD's storedVersions is trimmed only when etcd holds none
// of its objects in v1alpha1; afterwards every object is stored in v1beta1
// (raw etcd bytes) with every field as before in both versions' views; a
// third start finds everything up to date.
func TestMigrationOf1000ObjectsWithTheManagerKilled(t *testing.T) {
	for _, tc := range []struct {
		path string
		// controllers of kube-controller-manager; none for the operator path.
		controllers []string
		flags       []string
	}{
		{path: "builtin", controllers: []string{"storage-version-migrator-controller", "garbage-collector-controller"},
			flags: []string{"--storage-migration=builtin"}},
		{path: "operator", flags: []string{"--storage-migration=auto", "--builtin-migration-start-timeout=3s"}},
	} {
		t.Run(tc.path, func(t *testing.T) { migrateKilled(t, tc.path, tc.controllers, tc.flags) })
	}
}

func migrateKilled(t *testing.T, path string, controllers, flags []string) {
	const perKind = 334 // 1,002 objects
	ctx := context.Background()
	cluster, err := harness.StartProcessClusterWithCRDs(t.TempDir(), oldReleaseCRDs(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	c := cluster.Client
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{cluster.Env.ControlPlane.Etcd.URL.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Close() })
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		t.Fatal(err)
	}
	if len(controllers) > 0 {
		kcm, err := cluster.StartControllerManager(controllers...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(kcm.Stop)
	}

	// The old release's objects, created through its webhooks while the
	// test holds the leader lease (the manager only serves webhooks).
	if err := harness.HoldLeaderLease(ctx, c, operatorNamespace, "test"); err != nil {
		t.Fatal(err)
	}
	start := func(name string) *harness.Manager {
		m, err := cluster.StartManager(ctx, name, nil, append([]string{"--operator-namespace=" + operatorNamespace}, flags...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Stop)
		return m
	}
	webhooks := start("manager-webhooks")
	created := createEverything(t, c, perKind)
	for _, prefix := range registryPrefixes {
		if got := storedVersions(t, etcd, prefix); !maps.Equal(got, map[string]int{versionOf(prefix, "v1alpha1"): perKind}) {
			t.Fatalf("%s before the upgrade: %v", prefix, got)
		}
	}
	before := views(t, c)
	webhooks.Stop()

	// The upgrade: v1beta1 becomes the storage version; the new manager
	// leads, migrates, and is killed midway.
	for _, name := range manager.OwnedCRDs {
		setStorage(t, c, name, "v1beta1")
	}
	first := start("manager-1")
	if err := harness.ReleaseLeaderLease(ctx, c, operatorNamespace); err != nil {
		t.Fatal(err)
	}
	killedAt := ""
	deadline := time.Now().Add(3 * time.Minute)
	for killedAt == "" {
		checkTrimmedOnlyWhenDone(t, c, etcd)
		if path == "builtin" {
			// Once it waits for a StorageVersionMigration of kube-controller-manager.
			var svms svmv1.StorageVersionMigrationList
			if err := c.List(ctx, &svms); err != nil {
				t.Fatal(err)
			}
			if len(svms.Items) > 0 {
				first.Kill()
				killedAt = fmt.Sprintf("while it waited for StorageVersionMigration %s (conditions %v)", svms.Items[0].Name, svms.Items[0].Status.Conditions)
			}
		} else if n := migratedBy(t, first); n >= perKind*3/2 {
			// Midway through the second CRD: the first is done (and may
			// be trimmed), the second half done.
			first.Kill()
			killedAt = fmt.Sprintf("after rewriting %v objects itself", n)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no migration to interrupt within 3 minutes:\n%s", first.LogTail(20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkTrimmedOnlyWhenDone(t, c, etcd)
	untrimmed := 0
	for _, name := range manager.OwnedCRDs {
		if !slices.Equal(crdStoredVersions(t, c, name), []string{"v1beta1"}) {
			untrimmed++
		}
	}
	if untrimmed == 0 {
		t.Fatal("the migration had finished when the manager was killed: the test proves nothing")
	}

	// Started again, it completes.
	second := start("manager-2")
	deadline = time.Now().Add(4 * time.Minute)
	for {
		checkTrimmedOnlyWhenDone(t, c, etcd)
		done := 0
		for _, name := range manager.OwnedCRDs {
			if slices.Equal(crdStoredVersions(t, c, name), []string{"v1beta1"}) {
				done++
			}
		}
		if done == len(manager.OwnedCRDs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("migration not done 4 minutes after the restart:\n%s", second.LogTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, prefix := range registryPrefixes {
		if got := storedVersions(t, etcd, prefix); !maps.Equal(got, map[string]int{versionOf(prefix, "v1beta1"): perKind}) {
			t.Fatalf("raw etcd bytes under %s after the migration: %v", prefix, got)
		}
	}
	after := views(t, c)
	for key, want := range before {
		if !bytes.Equal(after[key], want) {
			t.Errorf("%s changed in the migration:\nbefore: %s\nafter:  %s", key, want, after[key])
		}
	}
	if len(after) != len(before) || len(before) != 2*len(created) {
		t.Fatalf("%d views after, %d before, for %d objects", len(after), len(before), len(created))
	}
	// The restarted manager saw each CRD migrated (by this path) or found
	// it done already (kube-controller-manager may finish what the killed
	// one started, and trims storedVersions before the manager sees it).
	var byPath float64
	harness.Eventually(t, time.Minute, func() error {
		families, err := second.Metrics()
		if err != nil {
			return err
		}
		byPath = harness.Sum(families, "vko_storage_migration_runs_total", map[string]string{"outcome": "migrated", "path": path})
		upToDate := harness.Sum(families, "vko_storage_migration_runs_total", map[string]string{"outcome": "up_to_date"})
		if byPath == 0 || byPath+upToDate != float64(len(manager.OwnedCRDs)) {
			return fmt.Errorf("the restarted manager migrated %v CRDs by the %s path and found %v up to date", byPath, path, upToDate)
		}
		return nil
	})
	secondMigrated := migratedBy(t, second)
	second.Stop()

	// A third start finds nothing to do.
	third := start("manager-3")
	harness.Eventually(t, time.Minute, func() error {
		families, err := third.Metrics()
		if err != nil {
			return err
		}
		if n := harness.Sum(families, "vko_storage_migration_runs_total", map[string]string{"outcome": "up_to_date"}); n != float64(len(manager.OwnedCRDs)) {
			return fmt.Errorf("%v CRDs found up to date, want %d", n, len(manager.OwnedCRDs))
		}
		return nil
	})
	if n := migratedBy(t, third); n != 0 {
		t.Fatalf("a third start rewrote %v objects", n)
	}
	t.Logf("%s path: %d objects stored as v1alpha1; the manager was killed %s, with %d of %d CRDs untrimmed; "+
		"the next start completed by the %s path for %v CRDs (%v objects rewritten by the operator); every object stored as v1beta1 with its fields intact; a third start found all up to date",
		path, len(created), killedAt, untrimmed, len(manager.OwnedCRDs), path, byPath, secondMigrated)
}

// checkTrimmedOnlyWhenDone fails when a CRD's storedVersions no longer
// lists v1alpha1 while etcd still holds one of its objects in v1alpha1.
func checkTrimmedOnlyWhenDone(t *testing.T, c client.Client, etcd *clientv3.Client) {
	t.Helper()
	for i, name := range manager.OwnedCRDs {
		if slices.Contains(crdStoredVersions(t, c, name), "v1alpha1") {
			continue
		}
		prefix := registryPrefixes[i]
		if n := storedVersions(t, etcd, prefix)[versionOf(prefix, "v1alpha1")]; n > 0 {
			t.Fatalf("storedVersions of %s was trimmed with %d objects still stored as v1alpha1", name, n)
		}
	}
}

// migratedBy is how many objects a manager process rewrote so far.
func migratedBy(t *testing.T, m *harness.Manager) float64 {
	t.Helper()
	families, err := m.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return harness.Sum(families, "vko_storage_migration_objects_total", nil)
}
