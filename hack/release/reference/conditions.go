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

package reference

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// apiGroup is an API group's storage-version package (api/<group>/v1beta1).
type apiGroup struct {
	Group string // vault.exemple.com
	Pkg   *goPackage
}

var groupNameMarker = regexp.MustCompile(`(?m)^// \+groupName=(\S+)$`)

// loadAPIGroups parses api/*/v1beta1, in presentation order.
func loadAPIGroups(src *sources) ([]apiGroup, error) {
	dirs, err := filepath.Glob(filepath.Join(src.root, "api", "*", "v1beta1"))
	if err != nil {
		return nil, fmt.Errorf("list the API packages: %w", err)
	}
	var out []apiGroup
	for _, d := range dirs {
		rel, _ := filepath.Rel(src.root, d)
		p, err := src.pkg(filepath.ToSlash(rel))
		if err != nil {
			return nil, err
		}
		info, err := os.ReadFile(filepath.Join(d, "groupversion_info.go"))
		if err != nil {
			return nil, fmt.Errorf("read the API group of %s: %w", rel, err)
		}
		m := groupNameMarker.FindSubmatch(info)
		if m == nil {
			return nil, fmt.Errorf("%s/groupversion_info.go: no +groupName marker", rel)
		}
		out = append(out, apiGroup{Group: string(m[1]), Pkg: p})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no api/*/v1beta1 package")
	}
	slices.SortFunc(out, func(a, b apiGroup) int {
		ra, rb := slices.Index(groupOrder, a.Group), slices.Index(groupOrder, b.Group)
		if ra != rb && ra >= 0 && rb >= 0 {
			return ra - rb
		}
		return strings.Compare(a.Group, b.Group)
	})
	return out, nil
}

// troubleshooting finds, in docs/troubleshooting.md, the section of each
// group and the reasons it has a row for: a reason links to its group's
// section (the rows have no anchor of their own), or to the page.
type troubleshooting struct {
	anchor map[string]string          // group → heading anchor
	rows   map[string]map[string]bool // group → reasons with a row
}

var troubleRow = regexp.MustCompile("(?m)^\\| `(\\w+)` \\|")

func loadTroubleshooting(root string, groups []apiGroup) (*troubleshooting, error) {
	text, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		return nil, fmt.Errorf("read docs/troubleshooting.md: %w", err)
	}
	t := &troubleshooting{anchor: map[string]string{}, rows: map[string]map[string]bool{}}
	for _, section := range strings.Split(string(text), "\n## ")[1:] {
		heading, body, _ := strings.Cut(section, "\n")
		for _, g := range groups {
			if strings.HasPrefix(heading, g.Group) {
				t.anchor[g.Group] = slug(heading)
				t.rows[g.Group] = map[string]bool{}
				for _, m := range troubleRow.FindAllStringSubmatch(body, -1) {
					t.rows[g.Group][m[1]] = true
				}
			}
		}
	}
	return t, nil
}

// link is where a group's reason is explained.
func (t *troubleshooting) link(group, reason string) string {
	if t.rows[group][reason] {
		return "[what to do](troubleshooting.md#" + t.anchor[group] + ")"
	}
	return "[troubleshooting](troubleshooting.md)"
}

// writeConditions writes each group's condition types and reasons, with
// their doc comments (api/<group>/v1beta1/conditions.go).
func writeConditions(p *page, groups []apiGroup, t *troubleshooting) error {
	p.heading(2, "Condition types and reasons")
	p.line("The `type` and `reason` of the conditions in each resource's `status.conditions`, as each group's")
	p.line("`conditions.go` declares them. Reasons are part of the API: they never change once released.\n")
	for _, g := range groups {
		var types, reasons [][]string
		var typesDoc string
		for _, c := range g.Pkg.consts() {
			switch {
			case strings.HasPrefix(c.Name, "Type"):
				types = append(types, []string{code(c.Value), cell(sentence(constText(c.Name, c.Doc)))})
				typesDoc = c.GroupDoc
			case strings.HasPrefix(c.Name, "Reason"):
				reasons = append(reasons, []string{code(c.Value), cell(sentence(constText(c.Name, c.Doc))), t.link(g.Group, c.Value)})
			}
		}
		if len(types) == 0 || len(reasons) == 0 {
			return fmt.Errorf("%s: no Type or Reason constant", g.Pkg.Dir)
		}
		p.heading(3, g.Group)
		if typesDoc != "" {
			p.line("%s\n", cell(sentence(typesDoc)))
		}
		p.table([]string{"Condition type", colDescription}, types)
		p.table([]string{"Reason", colDescription, "Troubleshooting"}, reasons)
	}
	return nil
}

// constText is a constant's doc comment without the "Name: " it opens
// with.
func constText(name, doc string) string {
	doc = strings.TrimSpace(doc)
	if rest, ok := strings.CutPrefix(doc, name+":"); ok {
		return strings.TrimSpace(rest)
	}
	return doc
}

// metadataKey is what an annotation, label or finalizer key of the API
// groups looks like: <group>/<name>.
var metadataKey = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+/[A-Za-z0-9._-]+$`)

// writeMetadataKeys writes the annotation, label and finalizer keys the
// API packages export, with their doc comments.
func writeMetadataKeys(p *page, groups []apiGroup) error {
	p.heading(2, "Annotations and labels")
	p.line("The metadata keys the API packages (`api/*/v1beta1`) export: annotations a user sets or reads,")
	p.line("and the finalizers the operator holds its resources with.\n")
	var rows [][]string
	for _, g := range groups {
		for _, c := range g.Pkg.consts() {
			if !token.IsExported(c.Name) || !metadataKey.MatchString(c.Value) || !strings.HasPrefix(c.Value, g.Group+"/") {
				continue
			}
			rows = append(rows, []string{code(c.Value), keyKind(c.Name), cell(sentence(constText(c.Name, c.Doc)))})
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("no annotation or label key in api/*/v1beta1")
	}
	p.table([]string{"Key", "Kind", colDescription}, rows)
	return nil
}

// keyKind says what a key constant is, by the name Go gives it.
func keyKind(name string) string {
	for _, kind := range []string{"Annotation", "Label", "Finalizer"} {
		if strings.HasSuffix(name, kind) {
			return strings.ToLower(kind)
		}
	}
	return "key"
}
