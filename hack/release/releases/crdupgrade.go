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

package releases

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
)

// crdChecks is crdify (what OLM v1 runs before it upgrades a CRD) as OLM
// v1 configures it, and stricter in one way: served versions are compared
// with each other too (OLM v1 skips that for CRDs with a conversion
// webhook). As in OLM v1, a change no rule recognises is an error,
// descriptions may change, and an enum may gain a value (every stored
// object stays valid: it is how a field like deletionPolicy grows).
var crdChecks = config.Config{
	UnhandledEnforcement: config.EnforcementPolicyError,
	Conversion:           config.ConversionPolicyNone,
	Validations: []config.ValidationConfig{
		{Name: "description", Enforcement: config.EnforcementPolicyNone},
		{Name: "enum", Enforcement: config.EnforcementPolicyError, Configuration: map[string]any{"additionPolicy": "Allow"}},
	},
}

// CRDUpgradeProblems says what in next's CRDs would break a cluster running
// previous: a CRD dropped, its scope changed, a version a cluster has
// stored removed, a field removed, a new required field, a bound or an enum
// tightened, a type or default changed. Each problem names the CRD, the
// version and the field.
func CRDUpgradeProblems(previous, next []*apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	r, err := runner.New(&crdChecks, runner.DefaultRegistry())
	if err != nil {
		return nil, fmt.Errorf("configure crdify: %w", err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range next {
		byName[crd.Name] = crd
	}
	var problems []string
	for _, old := range previous {
		crd, ok := byName[old.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("CRD %s: released, and missing from the new bundle (every object of it would be lost)", old.Name))
			continue
		}
		// A bundle's CRD has no status; a cluster running the previous
		// release has stored objects in its storage version at least.
		old = old.DeepCopy()
		for _, v := range old.Spec.Versions {
			if v.Storage && !slices.Contains(old.Status.StoredVersions, v.Name) {
				old.Status.StoredVersions = append(old.Status.StoredVersions, v.Name)
			}
		}
		res := r.Run(old, crd)
		for _, c := range res.CRDValidation {
			problems = appendErrors(problems, fmt.Sprintf("CRD %s", old.Name), c)
		}
		for _, group := range []map[string]map[string][]validations.ComparisonResult{res.SameVersionValidation, res.ServedVersionValidation} {
			for _, version := range slices.Sorted(maps.Keys(group)) {
				for _, field := range slices.Sorted(maps.Keys(group[version])) {
					for _, c := range group[version][field] {
						problems = appendErrors(problems, fmt.Sprintf("CRD %s, %s, field %s", old.Name, version, field), c)
					}
				}
			}
		}
	}
	sort.Strings(problems)
	return problems, nil
}

func appendErrors(problems []string, where string, c validations.ComparisonResult) []string {
	for _, e := range c.Errors {
		problems = append(problems, fmt.Sprintf("%s: %s: %s", where, c.Name, e))
	}
	return problems
}
