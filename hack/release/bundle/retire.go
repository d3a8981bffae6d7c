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

package bundle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// retire removes API versions from everything the bundle declares: the
// CRDs' spec.versions, the CSV's owned CRD entries and the examples. A
// release that retires a version ships CRDs without it; OLM then refuses
// the upgrade on a cluster whose CRD still lists it in
// status.storedVersions (the objects were never migrated), and the API
// server answers requests for it with 404.
func (in *inputs) retire(versions []string) error {
	if len(versions) == 0 {
		return nil
	}
	found := map[string]bool{}
	for _, crd := range in.crds {
		// Read in place: kustomize's maps hold plain ints, which the
		// unstructured helpers refuse to copy.
		spec, _ := crd.Object["spec"].(map[string]any)
		list, _ := spec["versions"].([]any)
		var err error
		kept := slices.DeleteFunc(list, func(v any) bool {
			m, _ := v.(map[string]any)
			name, _ := m["name"].(string)
			if slices.Contains(versions, name) {
				found[name] = true
				if storage, _ := m["storage"].(bool); storage {
					err = fmt.Errorf("CRD %s: %s is the storage version and cannot be retired", crd.GetName(), name)
				}
				return true
			}
			return false
		})
		if err != nil {
			return err
		}
		if len(kept) == 0 {
			return fmt.Errorf("CRD %s: retiring %v leaves no version", crd.GetName(), versions)
		}
		spec["versions"] = kept
	}
	for _, v := range versions {
		if !found[v] {
			return fmt.Errorf("retire %s: no CRD has that version", v)
		}
	}
	in.csv.Spec.CustomResourceDefinitions.Owned = slices.DeleteFunc(in.csv.Spec.CustomResourceDefinitions.Owned,
		func(d v1alpha1.CRDDescription) bool { return slices.Contains(versions, d.Version) })
	in.examples = slices.DeleteFunc(in.examples, func(e map[string]any) bool {
		apiVersion, _ := e["apiVersion"].(string)
		_, version, _ := strings.Cut(apiVersion, "/")
		return slices.Contains(versions, version)
	})
	return nil
}
