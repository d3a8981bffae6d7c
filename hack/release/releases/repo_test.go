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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository as committed: the next release can ship.
func TestTheNextReleaseCanShip(t *testing.T) {
	problems, err := Check(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// Each way a release goes wrong is found and named, on a copy of the
// repository's release files with one thing changed.
func TestCheckFindsWhatKeepsAReleaseFromShipping(t *testing.T) {
	const csv = "bundle/manifests/vault-keycloak-operator.clusterserviceversion.yaml"
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, root string)
		want string
	}{
		{"a release cut: dated, regenerated, frozen (until catalog-release adds its image)", func(t *testing.T, root string) {
			replace("CHANGELOG.md", "## 0.2.0 - unreleased", "## 0.2.0 - 2026-12-02")(t, root)
			replace(csv, "    categories: Security\n", "    categories: Security\n    createdAt: \"2026-12-02\"\n")(t, root)
			freeze(t, root, "0.2.0")
		}, ""},
		{"VERSION moved without 'make bundle'", write("VERSION", "0.3.0\n"), "CSV spec.version 0.2.0, VERSION says 0.3.0"},
		{"the CHANGELOG heads for another version", replace("CHANGELOG.md", "## 0.2.0 - unreleased", "## 0.3.0 - unreleased"), "CHANGELOG.md: first section is 0.3.0"},
		{"the CHANGELOG heading malformed", replace("CHANGELOG.md", "## 0.2.0 - unreleased", "## Unreleased"), `must read "## x.y.z - unreleased"`},
		{"the manager image's tag behind", replace("config/manager/kustomization.yaml", "newTag: v0.2.0", "newTag: v0.1.0"), "newTag must be v0.2.0"},
		{"replaces skips the last release", replace(csv, "replaces: vault-keycloak-operator.v0.1.0", "replaces: vault-keycloak-operator.v0.0.9"), `spec.replaces "vault-keycloak-operator.v0.0.9", want "vault-keycloak-operator.v0.1.0"`},
		{"a release dated but not regenerated", replace("CHANGELOG.md", "## 0.2.0 - unreleased", "## 0.2.0 - 2026-12-02"), "createdAt: required once the release is dated"},
		{"a released bundle in the wrong directory", func(t *testing.T, root string) {
			if err := os.Rename(filepath.Join(root, "release/bundles/0.1.0"), filepath.Join(root, "release/bundles/0.1.1")); err != nil {
				t.Fatal(err)
			}
		}, "holds 0.1.0 of package"},
		{"a released bundle differs from bundle/ at its version", func(t *testing.T, root string) {
			freeze(t, root, "0.2.0")
			replace(csv, "keywords:\n  - vault", "keywords:\n  - hashicorp")(t, root)
		}, "the released version differs from bundle/"},
		{"a CRD field removed", replace("bundle/manifests/vault.exemple.com_vaultapps.yaml", "              refreshInterval:", "              refreshEvery:"), "upgrade from 0.1.0: CRD vaultapps.vault.exemple.com, v1beta1"},
		{"OLM v1: AllNamespaces unsupported", replace(csv, "  - supported: true\n    type: AllNamespaces", "  - supported: false\n    type: AllNamespaces"), "AllNamespaces must be supported"},
		{"OLM v1: a conversion webhook with another install mode", replace(csv, "  - supported: false\n    type: OwnNamespace", "  - supported: true\n    type: OwnNamespace"), "a conversion webhook needs a bundle that supports AllNamespaces alone"},
		{"OLM v1: a kind it does not install", write("bundle/manifests/extra.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: extra\n"), "Deployment extra: a kind OLM v1 does not install"},
		{"a PrometheusRule in the bundle", write("bundle/manifests/alerts.yaml", "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: alerts\n"), "PrometheusRule alerts: OLM fails the whole install"},
		{"OLM v1: a dependency", write("bundle/metadata/properties.yaml", "properties:\n- type: olm.package.required\n  value: {packageName: cert-manager, versionRange: '>=1.0.0'}\n"), "metadata/properties.yaml: a dependency (olm.package.required)"},
		{"OperatorHub: OpenShift versions below minKubeVersion", func(t *testing.T, root string) {
			replace("bundle/metadata/annotations.yaml", "com.redhat.openshift.versions: v4.17", "com.redhat.openshift.versions: v4.12")(t, root)
			replace("bundle.Dockerfile", "com.redhat.openshift.versions=v4.17", "com.redhat.openshift.versions=v4.12")(t, root)
		}, "offers OpenShift 4.12 (Kubernetes 1.25), below spec.minKubeVersion 1.30.0"},
		{"OperatorHub: no keywords", replace(csv, "  keywords:\n  - vault\n  - keycloak\n  - secrets\n  - policy\n  - oidc\n", ""), "CSV spec.keywords: at least one"},
		{"OpenShift: a feature undeclared", replace(csv, "    features.operators.openshift.io/fips-compliant: \"false\"\n", ""), "features.operators.openshift.io/fips-compliant \"\": the OpenShift catalog needs"},
		{"the Dockerfile's labels differ", replace("bundle.Dockerfile", "bundle.channels.v1=stable", "bundle.channels.v1=alpha"), "bundle.Dockerfile: LABEL operators.operatorframework.io.bundle.channels.v1"},
		{"graph: a dangling release", replace("release/catalog-template.yaml", "  - name: vault-keycloak-operator.v0.1.0\n", "  - name: vault-keycloak-operator.v0.1.0\n  - name: vault-keycloak-operator.v0.0.9\n"), "2 heads"},
		{"graph: an unreleased entry", replace("release/catalog-template.yaml", "  - name: vault-keycloak-operator.v0.1.0\n", "  - name: vault-keycloak-operator.v0.1.0\n  - name: vault-keycloak-operator.v0.1.5\n    replaces: vault-keycloak-operator.v0.1.0\n"), "vault-keycloak-operator.v0.1.5 is not released"},
		{"graph: an entry replacing itself", replace("release/catalog-template.yaml", "  - name: vault-keycloak-operator.v0.1.0\n", "  - name: vault-keycloak-operator.v0.1.0\n    replaces: vault-keycloak-operator.v0.1.0\n"), "0 heads"},
		{"graph: a loop below the head", replace("release/catalog-template.yaml", "  - name: vault-keycloak-operator.v0.1.0\n",
			"  - name: vault-keycloak-operator.v0.1.0\n    replaces: vault-keycloak-operator.v0.1.2\n  - name: vault-keycloak-operator.v0.1.1\n    replaces: vault-keycloak-operator.v0.1.0\n"+
				"  - name: vault-keycloak-operator.v0.1.2\n    replaces: vault-keycloak-operator.v0.1.1\n  - name: vault-keycloak-operator.v0.1.3\n    replaces: vault-keycloak-operator.v0.1.2\n"), "an upgrade loop through vault-keycloak-operator.v0.1.2"},
		{"graph: a release left out of the channel", replace("release/catalog-template.yaml", "  - name: vault-keycloak-operator.v0.1.0\n", ""), "the released vault-keycloak-operator.v0.1.0 is not in the default channel stable"},
		{"a released bundle edited", replace("release/bundles/0.1.0/manifests/vault.exemple.com_vaultapps.yaml", "  name: vaultapps.vault.exemple.com", "  name: vaultapps.vault.exemple.com\n  labels: {edited: \"true\"}"), "vault.exemple.com_vaultapps.yaml: not the file released"},
		{"VERSION below every release", func(t *testing.T, root string) {
			write("VERSION", "0.0.9\n")(t, root)
		}, "VERSION 0.0.9: older than the released 0.1.0"},
		{"graph: a released bundle without its image", replace("release/catalog-template.yaml", "bundle:v0.1.0", "bundle:v0.0.1"), "no olm.bundle image for the released vault-keycloak-operator.v0.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range []string{"VERSION", "CHANGELOG.md", "bundle.Dockerfile", "config/manager/kustomization.yaml", "release/catalog-template.yaml"} {
				copyFile(t, filepath.Join(repoRoot, p), filepath.Join(root, p))
			}
			copyDir(t, filepath.Join(repoRoot, "bundle"), filepath.Join(root, "bundle"))
			copyDir(t, filepath.Join(repoRoot, "release", "bundles"), filepath.Join(root, "release", "bundles"))
			if problems, err := Check(root); err != nil || len(problems) > 0 {
				t.Fatalf("the copy itself: problems %q, err %v", problems, err)
			}
			tc.edit(t, root)
			problems, err := Check(root)
			if err != nil {
				if strings.Contains(err.Error(), tc.want) {
					return
				}
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("want no problem, got:\n%s", strings.Join(problems, "\n"))
				}
				return
			}
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("want a problem with %q, got:\n%s", tc.want, strings.Join(problems, "\n"))
			}
		})
	}
}

// freeze does what make release-freeze does: bundle/ kept under
// release/bundles/<version>, with its digests.
func freeze(t *testing.T, root, version string) {
	t.Helper()
	dir := filepath.Join(root, "release", "bundles", version)
	copyDir(t, filepath.Join(root, "bundle"), dir)
	var sums strings.Builder
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  ./%s\n", hex.EncodeToString(sum[:]), rel)
		return err
	})
	write(filepath.Join("release", "bundles", version+".sha256"), sums.String())(t, root)
}

func write(path, content string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replace edits a file of the copy; the text must be there.
func replace(path, old, new string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), old) {
			t.Fatalf("%s lacks %q", path, old)
		}
		write(path, strings.Replace(string(data), old, new, 1))(t, root)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		copyFile(t, path, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
