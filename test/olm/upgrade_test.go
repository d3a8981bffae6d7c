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
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/hack/release/bundle"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

var (
	secondRelease = release{version: nextMinor(firstVersion, 1), replaces: firstCSV}
	secondCSV     = secondRelease.csv()
)

// upgrade publishes a second bundle that replaces the first in the same
// catalog. The Subscription upgrades; the pod of the new version (the
// manager, restarted as OLM replaced the pod) takes over; every object made
// under the first version is still there with every field, in both API
// versions, and the in-operator migrator leaves storedVersions at
// [v1beta1].
func (e *env) upgrade(t *testing.T) {
	ctx := context.Background()
	before := e.snapshot(t, "v1alpha1", "v1beta1")

	// As on a cluster whose objects were once stored as v1alpha1: the new
	// version's migrator must rewrite them and trim the list, with the
	// RBAC the CSV grants.
	for _, name := range manager.OwnedCRDs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := e.c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Fatal(err)
		}
		crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
		if err := e.c.Status().Update(ctx, &crd); err != nil {
			t.Fatalf("CRD %s: record v1alpha1 as stored: %v", name, err)
		}
	}

	e.serveCatalog(t, e.catalogOf(t, secondRelease))
	csv := waitCSV(t, e.c, e.cluster, secondCSV, 4*time.Minute)
	if csv.Spec.Replaces != firstCSV {
		t.Errorf("CSV %s replaces %q, want %q", csv.Name, csv.Spec.Replaces, firstCSV)
	}
	t.Logf("CSV %s: %s", csv.Name, csv.Status.Phase)
	waitPlanComplete(t, e.c, secondCSV)
	waitGone(t, e.c, &operatorsv1alpha1.ClusterServiceVersion{}, client.ObjectKey{Namespace: installNamespace, Name: firstCSV})
	depName := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Name
	checkConversion(t, e.c, depName+"-service")

	// The old pod is gone, the new one runs: so does the manager here.
	e.manager.Stop()
	e.startManager(t, csv)
	e.waitSamplesReady(t)
	waitStoredVersions(t, e.c, e.manager)
	// The Event follows the trim (after the managedFields check), and is
	// written asynchronously.
	harness.Eventually(t, 30*time.Second, func() error {
		var events corev1.EventList
		if err := e.c.List(ctx, &events); err != nil {
			return err
		}
		for _, name := range manager.OwnedCRDs {
			if !slices.ContainsFunc(events.Items, func(ev corev1.Event) bool {
				return ev.InvolvedObject.Kind == "CustomResourceDefinition" && ev.InvolvedObject.Name == name && ev.Reason == migration.ReasonMigrated
			}) {
				return fmt.Errorf("no %s Event on CRD %s: the new version's migrator did not trim its storedVersions", migration.ReasonMigrated, name)
			}
		}
		return nil
	})

	after := e.snapshot(t, "v1alpha1", "v1beta1")
	for key, was := range before {
		now, ok := after[key]
		switch {
		case !ok:
			t.Errorf("%s: gone after the upgrade", key)
		case !equality.Semantic.DeepEqual(was, now):
			t.Errorf("%s changed in the upgrade:\nbefore %+v\nafter  %+v", key, was, now)
		}
	}
	var sub operatorsv1alpha1.Subscription
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: packageName}, &sub); err != nil {
		t.Fatal(err)
	}
	if sub.Status.InstalledCSV != secondCSV {
		t.Errorf("Subscription installed %q, want %q", sub.Status.InstalledCSV, secondCSV)
	}
}

// snapshot is what must survive an upgrade, by a key that says what it is:
// each sample in each API version given (spec, labels, annotations, UID,
// generation), the Vault policies and roles the operator wrote, and a
// digest of each Secret it wrote (never the values themselves).
func (e *env) snapshot(t *testing.T, versions ...string) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	for _, s := range harness.Samples {
		for _, version := range versions {
			obj, err := s.Get(ctx, e.c, version)
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%s %s/%s %s", s.Kind, s.Group, version, s.Name)] = map[string]any{
				"spec": obj.Object["spec"], "labels": obj.GetLabels(), "annotations": obj.GetAnnotations(),
				"uid": obj.GetUID(), "generation": obj.GetGeneration(),
			}
		}
	}
	admin, err := e.vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app.default.shop-api", "app.default.legacy-api"} {
		policy, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		role, err := admin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+name)
		if err != nil || role == nil {
			t.Fatalf("Vault role %s: %v", name, err)
		}
		out["Vault policy "+name] = policy
		out["Vault role "+name] = role.Data
	}
	for _, name := range []string{"gitea-secret-creds", "gitea-legacy-creds"} {
		var s corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: harness.SamplesNamespace, Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		digest := map[string][32]byte{}
		for k, v := range s.Data {
			digest[k] = sha256.Sum256(v)
		}
		out["Secret "+name] = map[string]any{"uid": s.UID, "labels": s.Labels, "data sha256": digest}
	}
	return out
}

// release is a later version of the operator, as its bundle is generated
// from config/manifests.
type release struct {
	version, replaces string
	retire            []string // API versions it no longer serves
}

func (r release) csv() string { return packageName + ".v" + r.version }

// nextMinor is the version n minor releases after v.
func nextMinor(v semver.Version, n uint64) string {
	return semver.Version{Major: v.Major, Minor: v.Minor + n}.String()
}

// catalogOf writes a file-based catalog holding the committed bundle and
// one generated bundle per release, each replacing the one before, all in
// channel stable, as releases would publish them.
func (e *env) catalogOf(t *testing.T, releases ...release) string {
	t.Helper()
	entries := []catalogEntry{{csv: firstCSV, dir: filepath.Join(harness.RepoRoot(), "bundle")}}
	for _, r := range releases {
		gen, err := bundle.Generate(bundle.Options{
			ManifestsDir: filepath.Join(harness.RepoRoot(), "config", "manifests"),
			Version:      r.version, Image: "quay.io/carbogame/vault-keycloak-operator:v" + r.version, Replaces: r.replaces,
			Package: packageName, Channels: "stable", DefaultChannel: "stable", RetireVersions: r.retire,
		})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(e.dir, "bundle-"+r.version)
		if err := gen.Write(dir); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, catalogEntry{csv: r.csv(), replaces: r.replaces, dir: dir})
	}
	return e.writeCatalog(t, entries...)
}

// catalogEntry is a bundle in a catalog's channel: its CSV's name, the one
// it replaces, and its directory.
type catalogEntry struct{ csv, replaces, dir string }

// writeCatalog writes a file-based catalog of the bundles, in channel
// stable in that order, and validates it with opm.
func (e *env) writeCatalog(t *testing.T, entries ...catalogEntry) string {
	t.Helper()
	opm := os.Getenv(harness.EnvOPMBin)
	index := fmt.Appendf(nil, `---
schema: olm.package
name: %[1]s
defaultChannel: stable
---
schema: olm.channel
package: %[1]s
name: stable
entries:
`, packageName)
	var bundles []byte
	for _, b := range entries {
		index = fmt.Appendf(index, "- name: %s\n", b.csv)
		if b.replaces != "" {
			index = fmt.Appendf(index, "  replaces: %s\n", b.replaces)
		}
		out, err := exec.Command(opm, "render", b.dir, "-o", "yaml").Output()
		if err != nil {
			t.Fatalf("opm render %s: %v", b.dir, err)
		}
		bundles = append(bundles, out...)
	}
	index = append(index, bundles...)
	catalog := filepath.Join(e.dir, "catalog-"+entries[len(entries)-1].csv)
	if err := os.MkdirAll(filepath.Join(catalog, packageName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(catalog, packageName, "index.yaml"), index, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(opm, "validate", catalog).CombinedOutput(); err != nil {
		t.Fatalf("opm validate: %v\n%s", err, out)
	}
	return catalog
}

// serveCatalog points the CatalogSource at a new catalog.
func (e *env) serveCatalog(t *testing.T, catalog string) {
	t.Helper()
	ctx := context.Background()
	addr, err := e.cluster.ServeCatalog(ctx, catalog)
	if err != nil {
		t.Fatal(err)
	}
	var source operatorsv1alpha1.CatalogSource
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: harness.OLMNamespace, Name: packageName}, &source); err != nil {
		t.Fatal(err)
	}
	source.Spec.Address = addr
	if err := e.c.Update(ctx, &source); err != nil {
		t.Fatal(err)
	}
}

// waitStoredVersions waits for the migrator to trim every owned CRD's
// status.storedVersions to the storage version.
func waitStoredVersions(t *testing.T, c client.Client, proc *harness.Process) {
	t.Helper()
	for _, name := range manager.OwnedCRDs {
		deadline := time.Now().Add(time.Minute)
		for {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &crd); err != nil {
				t.Fatal(err)
			}
			if slices.Equal(crd.Status.StoredVersions, []string{"v1beta1"}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s: storedVersions %v, want [v1beta1]\nmanager log:\n%s", name, crd.Status.StoredVersions, proc.LogTail(30))
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// waitGone waits until the object no longer exists.
func waitGone(t *testing.T, c client.Client, obj client.Object, key client.ObjectKey) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := c.Get(context.Background(), key, obj)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%T %s still there after 2 minutes (err %v)", obj, key, err)
		}
		time.Sleep(time.Second)
	}
}
