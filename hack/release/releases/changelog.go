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
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// changelogHeading is a release's section in CHANGELOG.md:
// "## 0.2.0 - 2026-12-02" once released, "## 0.2.0 - unreleased" before.
var changelogHeading = regexp.MustCompile(`^## (\S+) - (unreleased|\d{4}-\d{2}-\d{2})$`)

// Section is CHANGELOG.md's first section: the release the code is heading
// for, and its date once it is cut ("" before).
type Section struct {
	Version string
	Date    string
}

// FirstSection reads the first "## " heading of the CHANGELOG; it must be
// the next release's, in the form changelogHeading says.
func FirstSection(path string) (Section, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Section{}, fmt.Errorf("read changelog: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "## ") {
			continue
		}
		m := changelogHeading.FindStringSubmatch(line)
		if m == nil {
			return Section{}, fmt.Errorf("%s: first section %q: must read \"## x.y.z - unreleased\" or \"## x.y.z - YYYY-MM-DD\"", path, line)
		}
		s := Section{Version: m[1]}
		if m[2] != "unreleased" {
			if _, err := time.Parse(time.DateOnly, m[2]); err != nil {
				return Section{}, fmt.Errorf("%s: first section %q: %w", path, line, err)
			}
			s.Date = m[2]
		}
		return s, nil
	}
	return Section{}, fmt.Errorf("%s: no release section (\"## x.y.z - unreleased\")", path)
}
