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
	"context"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Objects written through v1alpha1 keep a managedFields entry naming it
// after v1alpha1 is gone from the CRD (a later release retires it). Some
// API server versions refuse server-side apply on such objects; this one
// (1.37) still takes it, and logs what it did. The migrator removes the
// entries either way; entries of served versions stay, and apply works.
func TestManagedFieldsOfARetiredVersionAreCleaned(t *testing.T) {
	ctx := context.Background()
	op, err := harness.Start(harness.Config{Options: manager.Options{WebhooksOnly: true}, CRDDir: oldReleaseCRDs(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Stop)
	ns := op.NewNamespace(t, map[string]string{"vault.exemple.com/allowed-capabilities": "create,read,update,patch,delete,list"})
	const crd = "vaultapps.vault.exemple.com"
	old := vaultApp(ns, 0).(*vaultv1alpha1.VaultApp)
	// Written through v1alpha1 by server-side apply, as a GitOps tool does.
	applied := &unstructured.Unstructured{}
	applied.SetAPIVersion("vault.exemple.com/v1alpha1")
	applied.SetKind("VaultApp")
	applied.SetNamespace(ns)
	applied.SetName(old.Name)
	applied.Object["spec"] = map[string]any{"vaultPolicy": string(old.Spec.VaultPolicy), "serviceAccount": old.Spec.ServiceAccount, "secretPaths": []any{"db"}}
	if err := op.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner("legacy-tool"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	setStorage(t, op.Client, crd, "v1beta1")
	dc, err := discovery.NewDiscoveryClientForConfig(op.Config)
	if err != nil {
		t.Fatal(err)
	}
	m := &migration.Migrator{Client: op.Client, Discovery: dc, Log: logr.Discard()}
	if _, err := m.MigrateCRD(ctx, crd); err != nil {
		t.Fatal(err)
	}
	if got := versionsInManagedFields(t, op.Client, ns, old.Name); !slices.Contains(got, "vault.exemple.com/v1alpha1") {
		t.Fatalf("managedFields name %v: the object was not written through v1alpha1, the test proves nothing", got)
	}

	// The next release: v1alpha1 is gone from the CRD.
	var def apiextensionsv1.CustomResourceDefinition
	if err := op.Client.Get(ctx, client.ObjectKey{Name: crd}, &def); err != nil {
		t.Fatal(err)
	}
	def.Spec.Versions = slices.DeleteFunc(def.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1alpha1" })
	if err := op.Client.Update(ctx, &def); err != nil {
		t.Fatalf("retire v1alpha1: %v", err)
	}
	apply := func() error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("vault.exemple.com/v1beta1")
		u.SetKind("VaultApp")
		u.SetNamespace(ns)
		u.SetName(old.Name)
		u.SetLabels(map[string]string{"applied": "yes"})
		return op.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("gitops"), client.ForceOwnership)
	}
	applyBefore := apply()

	res, err := m.MigrateCRD(ctx, crd)
	if err != nil {
		t.Fatal(err)
	}
	if res.ManagedFieldsCleaned != 1 {
		t.Fatalf("cleaned %d objects, want 1", res.ManagedFieldsCleaned)
	}
	if got := versionsInManagedFields(t, op.Client, ns, old.Name); slices.Contains(got, "vault.exemple.com/v1alpha1") {
		t.Fatalf("managedFields name %v after the cleanup", got)
	}
	if err := apply(); err != nil {
		t.Fatalf("server-side apply after the cleanup: %v", err)
	}
	t.Logf("server-side apply before the cleanup: %v", applyBefore)
	if res, err = m.MigrateCRD(ctx, crd); err != nil || res.ManagedFieldsCleaned != 0 {
		t.Fatalf("a second run cleaned %d objects (%v), want none", res.ManagedFieldsCleaned, err)
	}
}

func versionsInManagedFields(t *testing.T, c client.Client, namespace, name string) []string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("vault.exemple.com/v1beta1")
	u.SetKind("VaultApp")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range u.GetManagedFields() {
		out = append(out, e.APIVersion)
	}
	return out
}
