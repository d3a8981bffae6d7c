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
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	htmlAnchor   = regexp.MustCompile(`<a id="([^"]+)">`)
	headingLine  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	notInSlug    = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchors are the fragments a Markdown file offers: its headings, as
// GitHub makes them (lower case, spaces to hyphens, punctuation dropped),
// and its explicit <a id> anchors.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingLine.FindAllStringSubmatch(text, -1) {
		slug := notInSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
		out[strings.ReplaceAll(slug, " ", "-")] = true
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// Every relative link of the README and the docs leads somewhere: the file
// exists, and a fragment names a heading or anchor of it. Moving a section
// from one page to another must move the links to it too.
func TestDocLinksResolve(t *testing.T) {
	root := RepoRoot()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		for _, m := range markdownLink.FindAllStringSubmatch(string(text), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, fragment, _ := strings.Cut(link, "#")
			target := doc
			if file != "" {
				target = filepath.Join(filepath.Dir(doc), file)
			}
			targetText, err := os.ReadFile(target)
			if err != nil {
				if info, statErr := os.Stat(target); statErr == nil && info.IsDir() && fragment == "" {
					continue
				}
				t.Errorf("%s: link %q: %v", rel, link, err)
				continue
			}
			if fragment != "" && strings.HasSuffix(target, ".md") && !anchors(string(targetText))[fragment] {
				t.Errorf("%s: link %q: no heading or anchor %q there", rel, link, fragment)
			}
		}
	}
}
