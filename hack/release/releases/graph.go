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
	"strings"

	"sigs.k8s.io/yaml"
)

// template is what the checks read of opm's basic template
// (release/catalog-template.yaml).
type template struct {
	Schema  string `json:"schema"`
	Entries []struct {
		Schema         string         `json:"schema"`
		Name           string         `json:"name"`
		Package        string         `json:"package"`
		DefaultChannel string         `json:"defaultChannel"`
		Image          string         `json:"image"`
		Entries        []channelEntry `json:"entries"`
	} `json:"entries"`
}

// channelEntry is an olm.channel's entry: a CSV and what it upgrades from.
type channelEntry struct {
	Name     string   `json:"name"`
	Replaces string   `json:"replaces"`
	Skips    []string `json:"skips"`
}

// GraphProblems checks the release catalog's upgrade graph against the
// released bundles, as OperatorHub's pipeline does: one package, every
// released version in the default channel with its bundle image, every
// replaces and skips naming an entry of the channel, no loop, and no
// dangling bundle (every entry reached from the channel's head). next is
// the CSV name of the release being prepared and what it replaces: it must
// follow the head ("" replaces only for a first release).
func GraphProblems(templatePath string, released []Release, next, nextReplaces string) ([]string, error) {
	data, err := os.ReadFile(templatePath)
	if err != nil {
		return nil, fmt.Errorf("read the catalog template: %w", err)
	}
	var t template
	if err := yaml.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", templatePath, err)
	}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	isReleased := map[string]bool{}
	for _, r := range released {
		isReleased[CSVName(r.Version)] = true
	}
	defaultChannel, channels, images, inChannel := "", 0, map[string]bool{}, map[string]bool{}
	for _, e := range t.Entries {
		switch e.Schema {
		case "olm.package":
			if e.Name != Package {
				fail("catalog template: package %q, want %q", e.Name, Package)
			}
			defaultChannel = e.DefaultChannel
		case "olm.bundle":
			images[e.Image] = true
		}
	}
	for _, e := range t.Entries {
		if e.Schema != "olm.channel" {
			continue
		}
		channels++
		if e.Name == defaultChannel {
			for _, entry := range e.Entries {
				inChannel[entry.Name] = true
			}
		}
		head, channelProblems := channelProblems(e.Name, e.Package, e.Entries, isReleased)
		problems = append(problems, channelProblems...)
		if e.Name == defaultChannel && head != "" && next != "" && !isReleased[next] && nextReplaces != head {
			fail("bundle/: %s replaces %q, want the channel's head %q", next, nextReplaces, head)
		}
	}
	if channels == 0 || defaultChannel == "" {
		fail("catalog template: no channel, or no default channel")
	}
	for _, r := range released {
		if CSVName(r.Version) == next {
			continue // being cut: make catalog-release adds its entry and image
		}
		if !inChannel[CSVName(r.Version)] {
			fail("catalog template: the released %s is not in the default channel %s", CSVName(r.Version), defaultChannel)
		}
		found := false
		for image := range images {
			found = found || strings.HasSuffix(image, ":v"+r.Version.String())
		}
		if !found {
			fail("catalog template: no olm.bundle image for the released %s (…:v%s)", CSVName(r.Version), r.Version)
		}
	}
	return problems, nil
}

// channelProblems checks one channel's graph; it returns its head ("" when
// there is not exactly one).
func channelProblems(name, pkg string, entries []channelEntry, isReleased map[string]bool) (string, []string) {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	where := fmt.Sprintf("catalog template, channel %s", name)
	if pkg != Package {
		fail("%s: package %q, want %q", where, pkg, Package)
	}
	// edges: entry -> the entries it upgrades from.
	edges, replacedBy := map[string][]string{}, map[string]bool{}
	for _, entry := range entries {
		if _, dup := edges[entry.Name]; dup {
			fail("%s: %s listed twice", where, entry.Name)
		}
		edges[entry.Name] = nil
		if !isReleased[entry.Name] {
			fail("%s: %s is not released (no release/bundles/<version>)", where, entry.Name)
		}
	}
	for _, entry := range entries {
		for _, from := range append([]string{entry.Replaces}, entry.Skips...) {
			if from == "" {
				continue
			}
			if _, ok := edges[from]; !ok {
				fail("%s: %s upgrades from %s, which is not in the channel", where, entry.Name, from)
				continue
			}
			edges[entry.Name] = append(edges[entry.Name], from)
			replacedBy[from] = true
		}
	}
	var heads []string
	for _, entry := range entries {
		if !replacedBy[entry.Name] {
			heads = append(heads, entry.Name)
		}
	}
	if len(heads) != 1 {
		fail("%s: %d heads %v, want one (the others dangle: no upgrade reaches or leaves them)", where, len(heads), heads)
		return "", problems
	}
	reached := map[string]bool{}
	if loop := walk(heads[0], edges, reached, map[string]bool{}); loop != "" {
		fail("%s: an upgrade loop through %s", where, loop)
	}
	for entry := range edges {
		if !reached[entry] {
			fail("%s: %s dangles (no upgrade from the head %s reaches it)", where, entry, heads[0])
		}
	}
	return heads[0], problems
}

// walk visits what name upgrades from, depth first; it returns the entry
// where a loop closes, if any.
func walk(name string, edges map[string][]string, reached, onPath map[string]bool) string {
	if onPath[name] {
		return name
	}
	if reached[name] {
		return ""
	}
	reached[name], onPath[name] = true, true
	defer delete(onPath, name)
	for _, from := range edges[name] {
		if loop := walk(from, edges, reached, onPath); loop != "" {
			return loop
		}
	}
	return ""
}
