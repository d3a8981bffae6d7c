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
	"regexp"
	"strings"
	"testing"
)

var (
	reasonConstant = regexp.MustCompile(`(?m)^\s*Reason\w*\s*=\s*"(\w+)"`)
	troubleRow     = regexp.MustCompile("(?m)^\\| `(\\w+)` \\| (nobody|app team|admin|app team, or admin) \\| \\S")
)

// Every reason of the API (each group's conditions.go) has a row of its
// group's table in docs/troubleshooting.md saying who acts, and the page
// names no reason the API lacks: a new reason without its row fails here.
func TestTroubleshootingHasEveryReason(t *testing.T) {
	root := RepoRoot()
	page, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := strings.Split(string(page), "\n## ")
	for _, group := range []string{"vault.exemple.com", "secrets.carbogame.com"} {
		api, err := os.ReadFile(filepath.Join(root, "api", strings.Split(group, ".")[0], "v1beta1", "conditions.go"))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, m := range reasonConstant.FindAllStringSubmatch(string(api), -1) {
			want[m[1]] = true
		}
		if len(want) < 10 {
			t.Fatalf("%s: found only %d reasons in conditions.go: the pattern no longer matches", group, len(want))
		}
		var section string
		for _, s := range sections {
			if strings.HasPrefix(s, group) {
				section = s
			}
		}
		if section == "" {
			t.Fatalf("docs/troubleshooting.md has no section %q", group)
		}
		have := map[string]bool{}
		for _, m := range troubleRow.FindAllStringSubmatch(section, -1) {
			if have[m[1]] {
				t.Errorf("%s: reason %s has two rows", group, m[1])
			}
			have[m[1]] = true
		}
		for r := range want {
			if !have[r] {
				t.Errorf("%s: reason %s has no row in docs/troubleshooting.md (| `%s` | who acts | what to do |)", group, r, r)
			}
		}
		for r := range have {
			if !want[r] {
				t.Errorf("%s: docs/troubleshooting.md has a row for %s, which conditions.go does not define", group, r)
			}
		}
	}
}
