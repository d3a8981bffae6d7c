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
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Every change OLM v1 refuses is found, named by CRD, version and field;
// the changes it accepts pass.
func TestCRDUpgradeProblems(t *testing.T) {
	spec := func(crd *apiextensionsv1.CustomResourceDefinition, edit func(*apiextensionsv1.JSONSchemaProps)) {
		for i, v := range crd.Spec.Versions {
			if v.Name != "v1beta1" {
				continue
			}
			s := v.Schema.OpenAPIV3Schema.Properties["spec"]
			edit(&s)
			crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["spec"] = s
		}
	}
	field := func(name string, edit func(*apiextensionsv1.JSONSchemaProps)) func(*apiextensionsv1.CustomResourceDefinition) {
		return func(crd *apiextensionsv1.CustomResourceDefinition) {
			spec(crd, func(s *apiextensionsv1.JSONSchemaProps) {
				p := s.Properties[name]
				edit(&p)
				s.Properties[name] = p
			})
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*apiextensionsv1.CustomResourceDefinition)
		// want is a piece of the one problem expected; "" for none.
		want string
	}{
		{"an optional field added", field("newField", func(p *apiextensionsv1.JSONSchemaProps) { p.Type = "string" }), ""},
		{"a description changed", field("refreshInterval", func(p *apiextensionsv1.JSONSchemaProps) { p.Description = "reworded" }), ""},
		{"an enum value added", field("deletionPolicy", func(p *apiextensionsv1.JSONSchemaProps) {
			p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"Orphan"`)})
		}), ""},
		{"a field removed", func(crd *apiextensionsv1.CustomResourceDefinition) {
			spec(crd, func(s *apiextensionsv1.JSONSchemaProps) { delete(s.Properties, "serverRef") })
		}, "v1beta1.^.spec.serverRef"},
		{"a field made required", func(crd *apiextensionsv1.CustomResourceDefinition) {
			spec(crd, func(s *apiextensionsv1.JSONSchemaProps) { s.Required = append(s.Required, "refreshInterval") })
		}, "field ^.spec: required"},
		{"a bound tightened", field("refreshInterval", func(p *apiextensionsv1.JSONSchemaProps) { n := int64(3); p.MaxLength = &n }), "field ^.spec.refreshInterval: maxLength"},
		{"an enum narrowed", field("deletionPolicy", func(p *apiextensionsv1.JSONSchemaProps) { p.Enum = p.Enum[:1] }), "field ^.spec.deletionPolicy: enum"},
		{"an enum added", field("refreshInterval", func(p *apiextensionsv1.JSONSchemaProps) {
			p.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"5m"`)}}
		}), "field ^.spec.refreshInterval: enum"},
		{"a type changed", field("refreshInterval", func(p *apiextensionsv1.JSONSchemaProps) { p.Type = "integer" }), "field ^.spec.refreshInterval: type"},
		{"the scope changed", func(crd *apiextensionsv1.CustomResourceDefinition) { crd.Spec.Scope = apiextensionsv1.ClusterScoped }, ": scope:"},
		{"the stored version removed", func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Versions = crd.Spec.Versions[:1]
			crd.Spec.Versions[0].Storage = true
		}, "storedVersionRemoval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			previous := loadCRD(t, "vault.exemple.com_vaultapps.yaml")
			next := previous.DeepCopy()
			tc.edit(next)
			problems, err := CRDUpgradeProblems([]*apiextensionsv1.CustomResourceDefinition{previous}, []*apiextensionsv1.CustomResourceDefinition{next})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("problems: %q", problems)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("problems for an accepted change: %q", problems)
				}
				return
			}
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("want a problem with %q, got %q", tc.want, problems)
			}
			if !strings.HasPrefix(problems[0], "CRD vaultapps.vault.exemple.com") {
				t.Errorf("the problem does not name the CRD: %q", problems[0])
			}
		})
	}

	t.Run("a CRD dropped", func(t *testing.T) {
		previous := loadCRD(t, "vault.exemple.com_vaultapps.yaml")
		problems, err := CRDUpgradeProblems([]*apiextensionsv1.CustomResourceDefinition{previous}, nil)
		if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "missing from the new bundle") {
			t.Fatalf("problems %q, err %v", problems, err)
		}
	})
}

func loadCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "bundle", "manifests", file))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

var repoRoot = filepath.Join("..", "..", "..")
