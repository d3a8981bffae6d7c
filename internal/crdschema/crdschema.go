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

// Package crdschema checks a hub (v1beta1) object against the v1beta1 OpenAPI
// schema of its CRD, as shipped.
//
// Why: the API server checks an object against the schema of the version it
// was sent in. A v1alpha1 object passes the v1alpha1 schema, and the lossless
// conversion then restores v1beta1 fields from an annotation the sender
// wrote, fields no schema has looked at. The webhooks and controllers run
// this check on the hub object, so no version or annotation stores (or gets
// acted on) what v1beta1 would refuse.
package crdschema

import (
	"fmt"
	"io/fs"
	"sync"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	crds "github.com/carbogame/vault-keycloak-operator/config/crd/bases"
)

// hubVersion is the version whose schema is the one that binds.
const hubVersion = "v1beta1"

// specSchema is what a kind's spec is checked against: the OpenAPI
// validator (types, required, sizes, lengths, enums, patterns) and the
// structural schema (list-type=set uniqueness, which the validator does not
// check).
type specSchema struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
}

var (
	load    sync.Once
	schemas map[string]specSchema // by kind
	loadErr error
)

// Validate returns every way obj's spec breaks the v1beta1 schema of its
// CRD. obj is a v1beta1 VaultApp, VaultServer, KeycloakClientCredential or KeycloakServer.
func Validate(obj runtime.Object) field.ErrorList {
	var kind string
	var spec any
	switch o := obj.(type) {
	case *vaultv1beta1.VaultApp:
		kind, spec = "VaultApp", &o.Spec
	case *vaultv1beta1.VaultServer:
		kind, spec = "VaultServer", &o.Spec
	case *secretsv1beta1.KeycloakClientCredential:
		kind, spec = "KeycloakClientCredential", &o.Spec
	case *secretsv1beta1.KeycloakServer:
		kind, spec = "KeycloakServer", &o.Spec
	default:
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("no schema for %T", obj))}
	}
	load.Do(func() { schemas, loadErr = loadSchemas() })
	if loadErr != nil {
		return field.ErrorList{field.InternalError(nil, loadErr)}
	}
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spec)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	path := field.NewPath("spec")
	errs := validation.ValidateCustomResource(path, data, schemas[kind].validator)
	return append(errs, listtype.ValidateListSetsAndMaps(path, schemas[kind].structural, data)...)
}

// loadSchemas builds one specSchema per kind from the embedded CRDs: the
// schema of spec in the hub version.
func loadSchemas() (map[string]specSchema, error) {
	files, err := fs.Glob(crds.CRDs, "*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]specSchema{}
	for _, name := range files {
		raw, err := crds.CRDs.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Name != hubVersion || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			props, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
			if !ok {
				return nil, fmt.Errorf("%s: version %s has no spec schema", name, v.Name)
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			validator, _, err := validation.NewSchemaValidator(&internal)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			structural, err := structuralschema.NewStructural(&internal)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[crd.Spec.Names.Kind] = specSchema{validator: validator, structural: structural}
		}
	}
	for _, kind := range []string{"VaultApp", "KeycloakClientCredential", "KeycloakServer"} {
		if out[kind].validator == nil {
			return nil, fmt.Errorf("no %s schema of %s among the embedded CRDs", kind, hubVersion)
		}
	}
	return out, nil
}
