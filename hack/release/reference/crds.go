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

package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// groupOrder is the order the API groups are presented in: the Vault side
// first, as in the README and docs/troubleshooting.md. A group not named
// here comes after, by name.
var groupOrder = []string{"vault.exemple.com", "secrets.carbogame.com"}

// loadCRDs reads every CRD controller-gen wrote to config/crd/bases, in
// presentation order.
func loadCRDs(root string) ([]apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list the CRDs: %w", err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read CRD: %w", err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return nil, fmt.Errorf("parse CRD %s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRD in %s", filepath.Join(root, "config", "crd", "bases"))
	}
	rank := func(group string) int {
		if i := slices.Index(groupOrder, group); i >= 0 {
			return i
		}
		return len(groupOrder)
	}
	sort.Slice(crds, func(i, j int) bool {
		a, b := crds[i].Spec, crds[j].Spec
		if rank(a.Group) != rank(b.Group) {
			return rank(a.Group) < rank(b.Group)
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Names.Kind < b.Names.Kind
	})
	return crds, nil
}

// writeResources writes each CRD's storage version: names, printer
// columns and the fields of spec and status.
func writeResources(p *page, crds []apiextensionsv1.CustomResourceDefinition) error {
	p.heading(2, "Resources")
	p.line("Each resource as its CRD (config/crd/bases) serves it, in its storage version: the fields of its")
	p.line("OpenAPI schema, whether they are required, and the columns `kubectl get` shows. Default is the schema's;")
	p.line("most defaults are set by the defaulting webhook instead, and the description says them (\"Defaults to …\").\n")
	for i := range crds {
		if err := writeCRD(p, &crds[i]); err != nil {
			return err
		}
	}
	return nil
}

func writeCRD(p *page, crd *apiextensionsv1.CustomResourceDefinition) error {
	spec := crd.Spec
	var storage *apiextensionsv1.CustomResourceDefinitionVersion
	var others []string
	for i := range spec.Versions {
		switch v := &spec.Versions[i]; {
		case v.Storage:
			storage = v
		case v.Served:
			others = append(others, code(v.Name))
		}
	}
	if storage == nil || storage.Schema == nil || storage.Schema.OpenAPIV3Schema == nil {
		return fmt.Errorf("CRD %s: no storage version with a schema", crd.Name)
	}
	p.heading(3, spec.Names.Kind)
	scope := "namespaced"
	if spec.Scope == apiextensionsv1.ClusterScoped {
		scope = "cluster-scoped"
	}
	p.line("`%s/%s`, %s. Plural %s; short names %s; categories %s.\n", spec.Group, storage.Name, scope,
		code(spec.Names.Plural), orNone(codes(spec.Names.ShortNames)), orNone(codes(spec.Names.Categories)))
	if len(others) > 0 {
		p.line("Also served: %s, converted losslessly to and from `%s` by the operator's conversion webhook; only `%s` is listed here.\n",
			strings.Join(others, ", "), storage.Name, storage.Name)
	}
	if len(storage.AdditionalPrinterColumns) > 0 {
		rows := make([][]string, 0, len(storage.AdditionalPrinterColumns))
		for _, c := range storage.AdditionalPrinterColumns {
			shown := "always"
			if c.Priority > 0 {
				shown = "`-o wide`"
			}
			rows = append(rows, []string{c.Name, c.Type, code(c.JSONPath), shown, cell(c.Description)})
		}
		p.line("Columns of `kubectl get %s`:\n", spec.Names.Plural)
		p.table([]string{"Column", colType, "JSONPath", "Shown", colDescription}, rows)
	}
	root := storage.Schema.OpenAPIV3Schema
	var rows [][]string
	for _, top := range []string{"spec", "status"} {
		if s, ok := root.Properties[top]; ok {
			fieldRows(top, &s, slices.Contains(root.Required, top), &rows)
		}
	}
	p.table([]string{"Field", colType, colDefault, "Required", colDescription}, rows)
	return nil
}

// fieldRows appends the row of the field at path, then those of what it
// holds: an object's properties, an array's items ([]), a map's values
// (.<key>).
func fieldRows(path string, s *apiextensionsv1.JSONSchemaProps, required bool, rows *[][]string) {
	req := ""
	if required {
		req = "yes"
	}
	*rows = append(*rows, []string{code(path), code(typeOf(s)), defaultOf(s), req, describe(s)})
	descend(path, s, rows)
}

func descend(path string, s *apiextensionsv1.JSONSchemaProps, rows *[][]string) {
	switch {
	case len(s.Properties) > 0:
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			child := s.Properties[n]
			fieldRows(path+"."+n, &child, slices.Contains(s.Required, n), rows)
		}
	case s.Items != nil && s.Items.Schema != nil:
		descend(path+"[]", s.Items.Schema, rows)
	case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		descend(path+".<key>", s.AdditionalProperties.Schema, rows)
	}
}

// typeOf is a schema's type as Go would spell it ([]string, map[string]string).
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int or string"
	case s.Type == "array":
		if s.Items == nil || s.Items.Schema == nil {
			return "[]any"
		}
		return "[]" + typeOf(s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(s.AdditionalProperties.Schema)
	case s.Type == "" && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return "any"
	case s.Format != "":
		return s.Type + " (" + s.Format + ")"
	}
	return s.Type
}

// defaultOf is the schema's default, as the API server fills it in.
func defaultOf(s *apiextensionsv1.JSONSchemaProps) string {
	if s.Default == nil {
		return ""
	}
	var str string
	if json.Unmarshal(s.Default.Raw, &str) == nil {
		return code(str)
	}
	return code(string(s.Default.Raw))
}

// describe is the schema's description with the values its enum allows
// (of the field, or of each item of a list).
func describe(s *apiextensionsv1.JSONSchemaProps) string {
	text := s.Description
	enum, each := s.Enum, ""
	if len(enum) == 0 && s.Items != nil && s.Items.Schema != nil {
		enum, each = s.Items.Schema.Enum, "each "
	}
	if len(enum) > 0 {
		values := make([]string, 0, len(enum))
		for _, v := range enum {
			var str string
			if json.Unmarshal(v.Raw, &str) != nil {
				str = string(v.Raw)
			}
			values = append(values, "`"+str+"`")
		}
		text = strings.TrimSpace(text + " (" + each + "one of " + strings.Join(values, ", ") + ")")
	}
	return cell(text)
}

func codes(ss []string) string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, code(s))
	}
	return strings.Join(out, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
