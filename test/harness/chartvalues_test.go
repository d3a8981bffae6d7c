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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// leafValues are the dotted paths of values' leaves (an empty map is one).
func leafValues(prefix string, v any, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		*out = append(*out, prefix)
		return
	}
	for k, child := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		leafValues(p, child, out)
	}
}

// docs/install.md's table has a row for every value the chart takes, and
// none for a value it does not: a value added to the chart without its row
// fails here.
func TestInstallDocsListEveryChartValue(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "dist", "chart", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	var leaves []string
	leafValues("", values, &leaves)
	sort.Strings(leaves)
	doc, err := os.ReadFile(filepath.Join(RepoRoot(), "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			if i := strings.Index(name, "` |"); i > 0 {
				rows[name[:i]] = true
			}
		}
	}
	for _, leaf := range leaves {
		if !rows[leaf] {
			t.Errorf("docs/install.md has no row for the chart's value %s", leaf)
		}
		delete(rows, leaf)
	}
	for name := range rows {
		if strings.Contains(name, ".") || name == "replicas" {
			t.Errorf("docs/install.md has a row for %s, which the chart's values.yaml lacks", name)
		}
	}
	if len(leaves) < 10 {
		t.Fatalf("only %d values found in values.yaml: the walk is broken", len(leaves))
	}
}
