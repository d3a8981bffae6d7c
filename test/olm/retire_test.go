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
	"slices"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// thirdRelease retires v1alpha1: its CRDs no longer have it.
var thirdRelease = release{version: nextMinor(firstVersion, 2), replaces: secondCSV, retire: []string{"v1alpha1"}}

// retire publishes the third release, whose CRDs no longer serve v1alpha1.
//
// First on a cluster that looks unmigrated (storedVersions lists v1alpha1
// again): OLM refuses the upgrade and says why on the InstallPlan; the second
// keeps running and v1alpha1 is still served. Then, once the second release's
// manager restarted has migrated (storedVersions [v1beta1]), the
// InstallPlan OLM keeps retrying goes through: every object keeps
// every field, v1alpha1 requests get the API server's 404, and objects
// once written through v1alpha1 take server-side apply (the third's manager
// removed their v1alpha1 managedFields entries).
func (e *env) retire(t *testing.T) {
	ctx := context.Background()
	before := e.snapshot(t, "v1beta1")
	thirdCSV := thirdRelease.csv()

	// The unsafe path.
	for _, name := range manager.OwnedCRDs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := e.c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Fatal(err)
		}
		crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
		if err := e.c.Status().Update(ctx, &crd); err != nil {
			t.Fatal(err)
		}
	}
	e.serveCatalog(t, e.catalogOf(t, secondRelease, thirdRelease))
	refused := waitPlanRefused(t, e.c, thirdCSV, 4*time.Minute)
	t.Logf("InstallPlan %s refused the unsafe upgrade: %s", refused.Name, refused.Status.Message)
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: secondCSV}, &operatorsv1alpha1.ClusterServiceVersion{}); err != nil {
		t.Fatalf("%s is gone after the refused upgrade: %v", secondCSV, err)
	}
	if _, err := harness.Samples[1].Get(ctx, e.c, "v1alpha1"); err != nil {
		t.Fatalf("v1alpha1 is no longer served after the refused upgrade: %v", err)
	}

	// Migrated, the upgrade goes through.
	e.manager.Stop()
	csv2 := &operatorsv1alpha1.ClusterServiceVersion{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: secondCSV}, csv2); err != nil {
		t.Fatal(err)
	}
	e.startManager(t, csv2)
	waitStoredVersions(t, e.c, e.manager)
	// The refused InstallPlan is retried (OLM's --install-plan-retry-timeout)
	// and now goes through.
	csv := waitCSV(t, e.c, e.cluster, thirdCSV, 4*time.Minute)
	waitPlanComplete(t, e.c, thirdCSV)
	waitGone(t, e.c, &operatorsv1alpha1.ClusterServiceVersion{}, client.ObjectKey{Namespace: installNamespace, Name: secondCSV})
	for _, name := range manager.OwnedCRDs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := e.c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == "v1alpha1" }) {
			t.Fatalf("CRD %s still has v1alpha1 after %s", name, thirdCSV)
		}
	}
	e.manager.Stop()
	e.startManager(t, csv)
	for _, s := range harness.Samples {
		s.Version = "v1beta1"
		if err := s.WaitReady(ctx, e.c, 2*time.Minute); err != nil {
			t.Fatalf("%v\nmanager log:\n%s", err, e.manager.LogTail(40))
		}
	}

	after := e.snapshot(t, "v1beta1")
	for key, was := range before {
		if now, ok := after[key]; !ok || !equality.Semantic.DeepEqual(was, now) {
			t.Errorf("%s changed when v1alpha1 was retired:\nbefore %+v\nafter  %+v", key, was, now)
		}
	}
	_, err := harness.Samples[1].Get(ctx, e.c, "v1alpha1")
	if !apierrors.IsNotFound(err) && !strings.Contains(fmt.Sprint(err), "no matches for kind") {
		t.Fatalf("a v1alpha1 request after the retirement: %v, want the API server's not found", err)
	}
	t.Logf("a v1alpha1 request after the retirement: %v", err)

	// The legacy samples were applied through v1alpha1: server-side apply
	// works on them once their v1alpha1 managedFields entries are gone.
	for _, s := range harness.Samples {
		if s.Version != "v1alpha1" {
			continue
		}
		harness.Eventually(t, time.Minute, func() error {
			obj, err := s.Get(ctx, e.c, "v1beta1")
			if err != nil {
				return err
			}
			for _, f := range obj.GetManagedFields() {
				if strings.HasSuffix(f.APIVersion, "/v1alpha1") {
					return fmt.Errorf("%s %s still has a managedFields entry of %s (manager %s)", s.Kind, s.Name, f.APIVersion, f.Manager)
				}
			}
			return nil
		})
		apply := &unstructured.Unstructured{}
		apply.SetAPIVersion(s.Group + "/v1beta1")
		apply.SetKind(s.Kind)
		apply.SetName(s.Name)
		if s.Namespaced {
			apply.SetNamespace(harness.SamplesNamespace)
		}
		apply.SetLabels(map[string]string{"retired": "v1alpha1"})
		if err := e.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner("gitops"), client.ForceOwnership); err != nil {
			t.Errorf("server-side apply on %s %s after the retirement: %v", s.Kind, s.Name, err)
		}
	}
}

// waitPlanRefused waits for an InstallPlan of the CSV to say it refuses the
// upgrade for the risk of data loss, and returns it.
func waitPlanRefused(t *testing.T, c client.Client, csvName string, timeout time.Duration) *operatorsv1alpha1.InstallPlan {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var plans operatorsv1alpha1.InstallPlanList
		if err := c.List(context.Background(), &plans, client.InNamespace(installNamespace)); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for i, p := range plans.Items {
			if !slices.Contains(p.Spec.ClusterServiceVersionNames, csvName) {
				continue
			}
			seen = append(seen, fmt.Sprintf("%s %s %q", p.Name, p.Status.Phase, p.Status.Message))
			switch {
			case p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete:
				t.Fatalf("InstallPlan %s installed %s although v1alpha1 was still a stored version", p.Name, csvName)
			case strings.Contains(p.Status.Message, "risk of data loss"):
				// OLM retries for a minute ("retrying execution due to
				// error: ..."), then marks the plan Failed; either way the
				// reason is on the InstallPlan.
				return &plans.Items[i]
			case p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseFailed:
				t.Fatalf("InstallPlan %s failed for another reason: %s", p.Name, p.Status.Message)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no InstallPlan refusing %s after %s: %v", csvName, timeout, seen)
		}
		time.Sleep(time.Second)
	}
}
