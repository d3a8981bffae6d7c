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

package chart_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/carbogame/vault-keycloak-operator/hack/release/chart"
)

var repoRoot = filepath.Join("..", "..", "..")

// TestChartIsUpToDate regenerates the chart from config/ at VERSION and
// compares it with dist/chart, file by file.
func TestChartIsUpToDate(t *testing.T) {
	version, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := chart.Generate(chart.Options{ConfigDir: filepath.Join(repoRoot, "config"), Version: strings.TrimSpace(string(version))})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repoRoot, "dist", "chart")
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("dist/chart/%s is stale (run 'make chart' and commit)", name)
		}
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			if _, ok := files[rel]; !ok {
				t.Errorf("dist/chart/%s is not generated from config/ (remove it, or run 'make chart')", rel)
			}
		}
		return nil
	})
}

// Every object of config/default is in the chart, in the release's
// namespace; none is left in config's own namespace or with the image of
// another version.
func TestChartHoldsConfigDefault(t *testing.T) {
	files, err := chart.Generate(chart.Options{ConfigDir: filepath.Join(repoRoot, "config"), Version: "9.8.7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"templates/crds/customresourcedefinition-vaultapps.vault.exemple.com.yaml",
		"templates/deployment-controller-manager.yaml",
		"templates/validatingwebhookconfiguration-validating-webhook-configuration.yaml",
		"templates/clusterrole-manager-role.yaml",
		"templates/certificate-serving-cert.yaml",
		"templates/prometheusrule-alerts.yaml",
		"templates/configmap-grafana-dashboard.yaml",
	} {
		if _, ok := files[want]; !ok {
			t.Errorf("the chart lacks %s", want)
		}
	}
	for name, data := range files {
		if bytes.Contains(data, []byte("vault-keycloak-operator-system")) || bytes.Contains(data, []byte("VKO-")) {
			t.Errorf("%s keeps config's namespace or a placeholder", name)
		}
	}
	if !bytes.Contains(files["Chart.yaml"], []byte("appVersion: 9.8.7")) {
		t.Errorf("Chart.yaml:\n%s", files["Chart.yaml"])
	}
}

// The chart's default resources are config/manager's, which the bundle
// ships and make bench checks: one sizing, whichever way it is installed.
func TestChartResourcesAreTheManagers(t *testing.T) {
	values, err := os.ReadFile(filepath.Join(repoRoot, "hack", "release", "chart", "static", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chartValues struct {
		Resources corev1.ResourceRequirements `json:"resources"`
	}
	if err := yaml.Unmarshal(values, &chartValues); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		var dep appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &dep); err != nil || dep.Kind != "Deployment" {
			continue
		}
		found = true
		if got := dep.Spec.Template.Spec.Containers[0].Resources; !equality.Semantic.DeepEqual(got, chartValues.Resources) {
			t.Errorf("the chart's default resources %v differ from config/manager's %v", chartValues.Resources, got)
		}
	}
	if !found {
		t.Fatal("no Deployment in config/manager/manager.yaml")
	}
}
