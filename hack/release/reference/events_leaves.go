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
	"go/ast"
	"go/constant"
	"go/types"
	"sort"
	"strings"
)

// eventTypes are the Event types among leaves.
func (ev *eventReader) eventTypes(leaves []leaf) []string {
	var out []string
	for _, l := range leaves {
		if c := ev.flow.constOf(l.expr); c != nil && c.Pkg() != nil && c.Pkg().Path() == coreV1 && eventTypes[c.Name()] != "" {
			out = append(out, eventTypes[c.Name()])
		}
	}
	return out
}

// reasons are the Reason constants among leaves; computed when some leaf
// is something else (a zero value is no reason).
func (ev *eventReader) reasons(leaves []leaf) (out []constRef, computed bool) {
	for _, l := range leaves {
		if l.expr == nil {
			continue
		}
		if c, ok := ev.reasonConst(ev.flow.constOf(l.expr)); ok {
			out = append(out, c)
		} else {
			computed = true
		}
	}
	return out, computed
}

// reasonConst names c when it is a string constant ReasonX of the
// manager's module.
func (ev *eventReader) reasonConst(c *types.Const) (constRef, bool) {
	if c == nil || c.Pkg() == nil || !strings.HasPrefix(c.Name(), "Reason") || c.Val().Kind() != constant.String {
		return constRef{}, false
	}
	dir, ok := strings.CutPrefix(c.Pkg().Path(), ev.module+"/")
	if !ok {
		return constRef{}, false
	}
	return constRef{Value: constant.StringVal(c.Val()), Const: strings.TrimPrefix(dir, "api/") + "." + c.Name()}, true
}

// constOf is the constant e names, if it names one.
func (fl *flow) constOf(e ast.Expr) *types.Const {
	var id *ast.Ident
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	default:
		return nil
	}
	c, _ := fl.info.Uses[id].(*types.Const)
	return c
}

// calleeName is f of f(…) or x.f(…).
func calleeName(call *ast.CallExpr) string {
	switch fn := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}

// writeEvents writes the reasons of the Events, by reason and the kind of
// object they are recorded on.
func writeEvents(p *page, scan *eventScan) {
	p.heading(2, "Event reasons")
	p.line("The reasons of the Events the operator records (`kubectl get events`, `kubectl describe`), as its")
	p.line("sources (%s) give them: the Event type they are recorded with (both where the", strings.Join(codeList(eventDirs), ", "))
	p.line("code decides it apart from the reason), and the kind of the object they are recorded on (a")
	p.line("Namespace for a VaultApp's failure while its namespace is being deleted).\n")
	rs := make([]*eventReason, 0, len(scan.reasons))
	for _, r := range scan.reasons {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Value != b.Value {
			return a.Value < b.Value
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Const < b.Const
	})
	rows := make([][]string, 0, len(rs))
	for _, r := range rs {
		rows = append(rows, []string{code(r.Value), orDash(strings.Join(sortedKeys(r.Types), ", ")), orDash(r.Kind), code(r.Const)})
	}
	p.table([]string{"Reason", colType, "Recorded on", "Constant"}, rows)
	if len(scan.computed) > 0 {
		p.line("These also record Events whose reason is computed (not a constant the sources give): %s.\n",
			strings.Join(sortedKeys(scan.computed), ", "))
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func codeList(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, code(s))
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
