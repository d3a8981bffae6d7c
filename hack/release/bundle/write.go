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
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Files returns the bundle's files by their path inside the bundle
// directory. The content depends only on config/ and the options.
func (b *Bundle) Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	csv, err := marshal(b.CSV)
	if err != nil {
		return nil, err
	}
	files["manifests/"+b.opts.Package+".clusterserviceversion.yaml"] = csv
	for _, m := range b.Manifests {
		name := manifestFileName(m)
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("two bundle manifests would be written to %s", name)
		}
		data, err := marshal(m.Object)
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
	openshift, err := OpenShiftVersions(b.CSV.Spec.MinKubeVersion)
	if err != nil {
		return nil, err
	}
	files["metadata/annotations.yaml"] = []byte(fmt.Sprintf(`annotations:
  # Core bundle annotations.
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: %s
  operators.operatorframework.io.bundle.channels.v1: %s
  operators.operatorframework.io.bundle.channel.default.v1: %s

  # Annotations for testing.
  operators.operatorframework.io.test.mediatype.v1: scorecard+v1
  operators.operatorframework.io.test.config.v1: tests/scorecard/

  # The OpenShift releases the bundle is for (the catalogs of OperatorHub
  # on OpenShift): every one from the first on the CSV's minKubeVersion.
  com.redhat.openshift.versions: %s
`, b.opts.Package, b.opts.Channels, b.opts.DefaultChannel, openshift))
	if b.Scorecard != nil {
		data, err := marshal(b.Scorecard.Object)
		if err != nil {
			return nil, err
		}
		files["tests/scorecard/config.yaml"] = data
	}
	return files, nil
}

// OpenShiftVersions is the com.redhat.openshift.versions value for a
// minKubeVersion: "v4.N", every OpenShift from 4.N on, where 4.N is the first
// on that Kubernetes (OpenShift 4.N ships Kubernetes 1.(N+13) since 4.9).
func OpenShiftVersions(minKubeVersion string) (string, error) {
	v, err := semver.ParseTolerant(minKubeVersion)
	if err != nil || v.Major != 1 || v.Minor < 22 {
		return "", fmt.Errorf("CSV spec.minKubeVersion %q: must be a Kubernetes version 1.22 or later (for com.redhat.openshift.versions)", minKubeVersion)
	}
	return fmt.Sprintf("v4.%d", v.Minor-13), nil
}

// Write replaces dir's manifests/, metadata/ and tests/ with the bundle.
func (b *Bundle) Write(dir string) error {
	files, err := b.Files()
	if err != nil {
		return err
	}
	for _, sub := range []string{"manifests", "metadata", "tests"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	return WriteFiles(dir, files)
}

// WriteFiles writes each file under dir, by its path there.
func WriteFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// manifestFileName names files as operator-sdk does: CRDs by group and
// plural, the rest by name, version and kind.
func manifestFileName(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "CustomResourceDefinition" {
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
		return "manifests/" + group + "_" + plural + ".yaml"
	}
	parts := []string{u.GetName()}
	if gvk.Group != "" {
		parts = append(parts, gvk.Group)
	}
	parts = append(parts, gvk.Version, strings.ToLower(gvk.Kind))
	return "manifests/" + strings.Join(parts, "_") + ".yaml"
}

func marshal(v any) ([]byte, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	return data, nil
}
