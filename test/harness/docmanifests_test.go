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

package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

var (
	fence   = regexp.MustCompile("(?ms)^```(yaml|sh)\n(.*?)^```")
	heredoc = regexp.MustCompile(`(?ms)<<'?EOF'?\n(.*?)^EOF$`)
	// shellVar is a variable an unquoted heredoc expands; docVars are the
	// values a reader's shell would have by then.
	shellVar = regexp.MustCompile(`\$[A-Z_]+`)
	docVars  = map[string]string{
		"$VAULT_ADDR": "https://vault.example.com:8200", "$KEYCLOAK_URL": "https://sso.example.com",
		"$OPERATOR_NAMESPACE": "vault-keycloak-operator",
	}
)

// Every manifest of the operator's kinds in the README and docs/ (a yaml
// block, or a heredoc of a shell block) is one the API server and the
// webhook accept as written: no unknown field (a typo there is silently
// dropped by the API server), nothing the v1beta1 schema or the webhook's
// own rules refuse. Blocks the doc test runs prove more; this covers
// every one, run or not. Each is checked as the webhooks see it: defaulted,
// then validated.
func TestEveryManifestInTheDocsIsValid(t *testing.T) {
	root := RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllSubmatch(data, -1) {
			sources := [][]byte{m[2]}
			if string(m[1]) == "sh" {
				sources = nil
				for _, h := range heredoc.FindAllSubmatch(m[2], -1) {
					sources = append(sources, h[1])
				}
			}
			for _, src := range sources {
				src = shellVar.ReplaceAllFunc(src, func(v []byte) []byte {
					if value, ok := docVars[string(v)]; ok {
						return []byte(value)
					}
					return v
				})
				for _, doc := range bytes.Split(src, []byte("\n---\n")) {
					rel, _ := filepath.Rel(root, file)
					if errs, ok := validateDocManifest(doc); ok {
						checked++
						for _, e := range errs {
							t.Errorf("%s: %s", rel, e)
						}
					}
				}
			}
		}
	}
	if checked < 9 {
		t.Fatalf("only %d manifests of the operator's kinds found in the docs: the block or heredoc syntax changed", checked)
	}
}

// validateDocManifest decodes a manifest of the operator's kinds strictly
// and checks it as the webhook would; ok is false for any other manifest.
func validateDocManifest(doc []byte) (field.ErrorList, bool) {
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil || !strings.HasSuffix(head.APIVersion, "/v1beta1") {
		return nil, false
	}
	var obj any
	var validate func() field.ErrorList
	switch head.APIVersion + " " + head.Kind {
	case vaultv1beta1.GroupVersion.String() + " VaultApp":
		app := &vaultv1beta1.VaultApp{}
		obj, validate = app, func() field.ErrorList {
			app.SetDefaults(vaultv1beta1.DefaultTokenTTL) // as the defaulting webhook does
			return append(tenancy.ValidateVaultApp(app), crdschema.Validate(app)...)
		}
	case vaultv1beta1.GroupVersion.String() + " VaultServer":
		s := &vaultv1beta1.VaultServer{}
		obj, validate = s, func() field.ErrorList { return append(tenancy.ValidateVaultServer(s), crdschema.Validate(s)...) }
	case secretsv1beta1.GroupVersion.String() + " KeycloakClientCredential":
		kcc := &secretsv1beta1.KeycloakClientCredential{}
		obj, validate = kcc, func() field.ErrorList {
			kcc.SetDefaults() // as the defaulting webhook does
			return append(tenancy.ValidateKeycloakClientCredential(kcc), crdschema.Validate(kcc)...)
		}
	case secretsv1beta1.GroupVersion.String() + " KeycloakServer":
		s := &secretsv1beta1.KeycloakServer{}
		obj, validate = s, func() field.ErrorList { return crdschema.Validate(s) }
	default:
		return nil, false
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath(head.Kind), "", err.Error())}, true
	}
	return validate(), true
}
