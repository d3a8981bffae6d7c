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

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// shippedMemory is the manager container's memory request and limit as
// config/manager ships them (the bundle's and, by a test of the chart's
// generator, the chart's defaults), in bytes.
func shippedMemory(b *testing.B) (request, limit int64) {
	b.Helper()
	manifest, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "config", "manager", "manager.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		var dep appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &dep); err != nil || dep.Kind != "Deployment" {
			continue
		}
		res := dep.Spec.Template.Spec.Containers[0].Resources
		return res.Requests.Memory().Value(), res.Limits.Memory().Value()
	}
	b.Fatal("no Deployment in config/manager/manager.yaml")
	return 0, 0
}
