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

package bundle_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/carbogame/vault-keycloak-operator/hack/release/bundle"
)

// repoRoot is the clone this test file is in (hack/release/bundle).
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}()

var bundleDir = filepath.Join(repoRoot, "bundle")

func loadBundle(t *testing.T) *manifests.Bundle {
	t.Helper()
	b, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		t.Fatalf("load bundle/: %v", err)
	}
	return b
}

// TestBundlePassesOperatorFrameworkValidators runs what
// 'operator-sdk bundle validate ./bundle --select-optional suite=operatorframework'
// runs, and accepts neither an error nor a warning.
func TestBundlePassesOperatorFrameworkValidators(t *testing.T) {
	b := loadBundle(t)
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.GoodPracticesValidator,
	)
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.37"})
	var findings int
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			findings++
			t.Errorf("error: %s: %v", result.Name, e)
		}
		for _, w := range result.Warnings {
			findings++
			t.Errorf("warning: %s: %v", result.Name, w)
		}
	}
	if b.CSV == nil || len(b.V1CRDs) != 4 {
		t.Fatalf("bundle has CSV %v and %d CRDs, want a CSV and 4 CRDs", b.CSV != nil, len(b.V1CRDs))
	}
}

// TestScorecardChecks statically checks what the scorecard's basic and olm
// suites check on a cluster (operator-sdk internal/scorecard/tests).
func TestScorecardChecks(t *testing.T) {
	b := loadBundle(t)
	csv := b.CSV
	var examples []unstructured.Unstructured
	if err := json.Unmarshal([]byte(csv.Annotations["alm-examples"]), &examples); err != nil {
		t.Fatalf("alm-examples: %v", err)
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range b.V1CRDs {
		crds[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = crd
	}
	owned := func(kind, version string) *v1alpha1.CRDDescription {
		for i, d := range csv.Spec.CustomResourceDefinitions.Owned {
			if d.Kind == kind && d.Version == version {
				return &csv.Spec.CustomResourceDefinitions.Owned[i]
			}
		}
		return nil
	}

	// Every kind in every served version has an example.
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !slices.ContainsFunc(examples, func(e unstructured.Unstructured) bool {
				return e.GetAPIVersion() == crd.Spec.Group+"/"+v.Name && e.GetKind() == crd.Spec.Names.Kind
			}) {
				t.Errorf("no alm-example for %s %s/%s", crd.Spec.Names.Kind, crd.Spec.Group, v.Name)
			}
		}
	}

	for _, e := range examples {
		gv := strings.SplitN(e.GetAPIVersion(), "/", 2)
		name := e.GetKind() + " " + e.GetAPIVersion()
		spec, ok := e.Object["spec"].(map[string]any)
		if !ok || len(spec) == 0 { // basic-check-spec
			t.Errorf("%s: example has no spec", name)
			continue
		}
		crd := crds[gv[0]+"/"+e.GetKind()]
		if crd == nil {
			t.Errorf("%s: no CRD in the bundle", name)
			continue
		}
		var schema *apiextensionsv1.JSONSchemaProps
		for _, v := range crd.Spec.Versions {
			if v.Name == gv[1] && v.Schema != nil {
				schema = v.Schema.OpenAPIV3Schema
			}
		}
		if schema == nil { // olm-crds-have-validation
			t.Errorf("%s: CRD version has no schema", name)
			continue
		}
		desc := owned(e.GetKind(), gv[1])
		if desc == nil {
			t.Errorf("%s: not owned by the CSV", name)
			continue
		}
		if len(desc.Resources) == 0 { // olm-crds-have-resources
			t.Errorf("%s: owned CRD lists no resources", name)
		}
		for key := range spec { // olm-spec-descriptors
			if _, ok := schema.Properties["spec"].Properties[key]; !ok {
				t.Errorf("%s: example's spec.%s is not in the schema", name, key)
			}
			if !slices.ContainsFunc(desc.SpecDescriptors, func(d v1alpha1.SpecDescriptor) bool { return d.Path == key }) {
				t.Errorf("%s: spec.%s has no specDescriptor", name, key)
			}
		}
		// olm-status-descriptors, for every status field the schema has.
		for key := range schema.Properties["status"].Properties {
			if !slices.ContainsFunc(desc.StatusDescriptors, func(d v1alpha1.StatusDescriptor) bool { return d.Path == key }) {
				t.Errorf("%s: status.%s has no statusDescriptor", name, key)
			}
		}
		// Every top-level spec field of the schema has a descriptor too.
		for key := range schema.Properties["spec"].Properties {
			if !slices.ContainsFunc(desc.SpecDescriptors, func(d v1alpha1.SpecDescriptor) bool { return d.Path == key }) {
				t.Errorf("%s: spec.%s (in the schema) has no specDescriptor", name, key)
			}
		}
		if !slices.ContainsFunc(desc.StatusDescriptors, func(d v1alpha1.StatusDescriptor) bool {
			return d.Path == "conditions" && slices.Contains(d.XDescriptors, "urn:alm:descriptor:io.kubernetes.conditions")
		}) {
			t.Errorf("%s: conditions lack the io.kubernetes.conditions descriptor", name)
		}
	}

	// The scorecard configuration runs the six basic and olm tests.
	cfg, err := os.ReadFile(filepath.Join(bundleDir, "tests", "scorecard", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range []string{"basic-check-spec", "olm-bundle-validation", "olm-crds-have-validation", "olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors"} {
		if !bytes.Contains(cfg, []byte("- "+test+"\n")) {
			t.Errorf("scorecard config lacks %s", test)
		}
	}
}

// TestBundleIsUpToDate regenerates the bundle from config/ with the version
// and image it holds, and compares.
func TestBundleIsUpToDate(t *testing.T) {
	b := loadBundle(t)
	generated, err := bundle.Generate(bundle.Options{
		ManifestsDir: filepath.Join(repoRoot, "config", "manifests"),
		Version:      b.CSV.Spec.Version.String(),
		Image:        b.CSV.Annotations["containerImage"],
		Replaces:     b.CSV.Spec.Replaces,
		CreatedAt:    b.CSV.Annotations["createdAt"],
		Package:      "vault-keycloak-operator", Channels: "stable", DefaultChannel: "stable",
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := generated.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(bundleDir, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("bundle/%s is stale (run 'make bundle' and commit)", name)
		}
	}
	var onDisk []string
	_ = filepath.WalkDir(bundleDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(bundleDir, path)
			onDisk = append(onDisk, rel)
		}
		return nil
	})
	for _, f := range onDisk {
		if _, ok := files[f]; !ok {
			t.Errorf("bundle/%s is not generated from config/ (remove it, or run 'make bundle')", f)
		}
	}
}

// A release that retires v1alpha1 ships CRDs, owned CRD entries and
// examples without it, and still passes the validators; the storage
// version cannot be retired.
func TestBundleRetiringV1alpha1(t *testing.T) {
	opts := bundle.Options{
		ManifestsDir: filepath.Join(repoRoot, "config", "manifests"),
		Version:      "0.3.0", Image: "quay.io/carbogame/vault-keycloak-operator:v0.3.0", Replaces: "vault-keycloak-operator.v0.2.0",
		Package: "vault-keycloak-operator", Channels: "stable", DefaultChannel: "stable", RetireVersions: []string{"v1alpha1"},
	}
	gen, err := bundle.Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := gen.Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range b.V1CRDs {
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1beta1" {
			t.Errorf("CRD %s serves %v, want v1beta1 alone", crd.Name, crd.Spec.Versions)
		}
	}
	for _, owned := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		if owned.Version != "v1beta1" {
			t.Errorf("the CSV owns %s %s", owned.Name, owned.Version)
		}
	}
	if strings.Contains(b.CSV.Annotations["alm-examples"], "/v1alpha1") {
		t.Error("alm-examples still holds a v1alpha1 example")
	}
	validators := validation.DefaultBundleValidators.WithValidators(validation.OperatorHubV2Validator, validation.GoodPracticesValidator)
	for _, result := range validators.Validate(append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.37"})...) {
		for _, e := range result.Errors {
			t.Errorf("error: %s: %v", result.Name, e)
		}
	}

	opts.RetireVersions = []string{"v1beta1"}
	if _, err := bundle.Generate(opts); err == nil || !strings.Contains(err.Error(), "storage version") {
		t.Fatalf("retiring the storage version: err = %v", err)
	}
	opts.RetireVersions = []string{"v1alpha"} // a typo would ship v1alpha1 still
	if _, err := bundle.Generate(opts); err == nil || !strings.Contains(err.Error(), "no CRD has that version") {
		t.Fatalf("retiring a version no CRD has: err = %v", err)
	}
}
