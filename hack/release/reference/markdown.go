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
	"regexp"
	"strings"
)

// page is the Markdown being written.
type page struct{ strings.Builder }

// line writes one line (a paragraph needs an empty line after it).
func (p *page) line(format string, args ...any) {
	_, _ = fmt.Fprintf(p, format, args...) // a strings.Builder does not fail
	p.WriteByte('\n')
}

// heading writes a heading of level and the empty line after it.
func (p *page) heading(level int, text string) {
	p.line("%s %s\n", strings.Repeat("#", level), text)
}

// Column headings several tables share.
const (
	colType        = "Type"
	colDefault     = "Default"
	colDescription = "Description"
)

// table writes a table whose cells are already Markdown (see cell, code).
func (p *page) table(header []string, rows [][]string) {
	p.line("| %s |", strings.Join(header, " | "))
	p.line("|%s", strings.Repeat("---|", len(header)))
	for _, r := range rows {
		p.line("| %s |", strings.Join(r, " | "))
	}
	p.line("")
}

var (
	backquoted = regexp.MustCompile("`[^`]*`")
	// Outside code spans: what a table or GitHub's HTML would take as its
	// own (a pipe ends the cell, <namespace> would be dropped as a tag, a
	// pair of * would turn into emphasis).
	proseEscapes = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`)
)

// cell is text (a description, a usage) as one table cell: its newlines
// collapsed, and escaped except within `code spans`.
func cell(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	var b strings.Builder
	last := 0
	for _, span := range backquoted.FindAllStringIndex(text, -1) {
		b.WriteString(proseEscapes.Replace(text[last:span[0]]))
		b.WriteString(strings.ReplaceAll(text[span[0]:span[1]], "|", `\|`))
		last = span[1]
	}
	b.WriteString(proseEscapes.Replace(text[last:]))
	return b.String()
}

// code is s as a code span in a table cell.
func code(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	if strings.Contains(s, "`") {
		fence = "`` "
		return fence + strings.ReplaceAll(s, "|", `\|`) + " ``"
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}

var notInSlug = regexp.MustCompile(`[^\p{L}\p{N} _-]`)

// slug is the anchor GitHub gives a heading, as test/harness/doclinks_test.go
// resolves it: lower case, punctuation dropped, spaces to hyphens.
func slug(heading string) string {
	s := notInSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(heading)), "")
	return strings.ReplaceAll(s, " ", "-")
}

// sentence is a doc comment as one line, capitalised.
func sentence(doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	if doc == "" {
		return doc
	}
	return strings.ToUpper(doc[:1]) + doc[1:]
}
