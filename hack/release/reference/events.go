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
	"go/ast"
	"sort"
	"strings"
)

// The Events the controllers record, read from their sources. An Event's
// reason is often decided away from the call that records it, so two
// kinds of site are read, and their arguments followed back (flow.go):
//   - a call Eventf, Event or Record, whose arguments hold the Event type
//     and, right after it, the reason (events.EventRecorder,
//     record.EventRecorder and clusterevent.Record all put them so);
//   - a composite literal pairing an Event type with a reason (the report
//     and notice values the controllers pass on to Eventf).
// A call whose reason is not a constant there is named as computed.

// eventDirs are where the manager records Events: the controllers, and the
// storage migration (Events on the CRDs).
var eventDirs = []string{"internal/controller", "internal/migration"}

// coreV1 is where the Event types are declared.
const coreV1 = "k8s.io/api/core/v1"

var eventTypes = map[string]string{"EventTypeNormal": "Normal", "EventTypeWarning": "Warning"}

// eventReason is one reason constant used on Events.
type eventReason struct {
	Value, Const string          // "Deleted", "vault/v1beta1.ReasonDeleted"
	Types, By    map[string]bool // Normal/Warning; the recording packages
}

// eventScan is what the sources say of the Events.
type eventScan struct {
	reasons map[string]*eventReason // by Const
	// computed are the calls whose reason is not (only) constants, as
	// `file` (function).
	computed map[string]bool
}

func scanEvents(src *sources) (*eventScan, error) {
	scan := &eventScan{reasons: map[string]*eventReason{}, computed: map[string]bool{}}
	for _, top := range eventDirs {
		dirs, err := src.dirs(top)
		if err != nil {
			return nil, err
		}
		for _, dir := range dirs {
			p, err := src.pkg(dir)
			if err != nil {
				return nil, err
			}
			if err := scan.pkg(src, p); err != nil {
				return nil, err
			}
		}
	}
	if len(scan.reasons) == 0 {
		return nil, fmt.Errorf("no Event reason found under %s", strings.Join(eventDirs, ", "))
	}
	return scan, nil
}

// pkg reads the Event sites of one package.
func (scan *eventScan) pkg(src *sources, p *goPackage) error {
	fl := newFlow(p)
	ev := &eventReader{src: src, pkg: p, flow: fl}
	for _, s := range fl.scopes {
		if s.parent != nil {
			continue // a closure: walked with its function
		}
		var err error
		ast.Inspect(s.decl.Body, func(n ast.Node) bool {
			if err != nil {
				return false
			}
			switch n := n.(type) {
			case *ast.CallExpr:
				if name := calleeName(n); name == "Eventf" || name == "Event" || name == "Record" {
					err = scan.call(ev, n, fl.scopeAt(n.Pos()))
				}
			case *ast.CompositeLit:
				err = scan.literal(ev, n, fl.scopeAt(n.Pos()))
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// call reads a recording call: its type, and the reason after it.
func (scan *eventScan) call(ev *eventReader, call *ast.CallExpr, at *scope) error {
	for i := 0; i+1 < len(call.Args); i++ {
		types, isType := ev.eventType(call.Args[i], at)
		if !isType {
			continue
		}
		reasons, computed, err := ev.reasons(call.Args[i+1], at)
		if err != nil {
			return err
		}
		for _, c := range reasons {
			scan.add(c, types, ev.pkg.Dir)
		}
		if computed {
			scan.computed[fmt.Sprintf("`%s` (%s)", at.file.Name, at.decl.Name.Name)] = true
		}
		return nil
	}
	return nil
}

// literal reads a composite literal that holds an Event type and reasons.
func (scan *eventScan) literal(ev *eventReader, lit *ast.CompositeLit, at *scope) error {
	var types []string
	var reasons []constRef
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			el = kv.Value
		}
		if t, isType := ev.eventType(el, at); isType {
			types = append(types, t...)
			continue
		}
		r, _, err := ev.reasons(el, at)
		if err != nil {
			return err
		}
		reasons = append(reasons, r...)
	}
	if len(types) == 0 {
		return nil
	}
	for _, c := range reasons {
		scan.add(c, types, ev.pkg.Dir)
	}
	return nil
}

func (scan *eventScan) add(c constRef, types []string, by string) {
	r := scan.reasons[c.Const]
	if r == nil {
		r = &eventReason{Value: c.Value, Const: c.Const, Types: map[string]bool{}, By: map[string]bool{}}
		scan.reasons[c.Const] = r
	}
	for _, t := range types {
		r.Types[t] = true
	}
	r.By[by] = true
}

// constRef is a string constant of the manager's module.
type constRef struct{ Value, Const string }

// eventReader classifies what the flow leads to.
type eventReader struct {
	src  *sources
	pkg  *goPackage
	flow *flow
}

// eventType says whether e is an Event type, and which: the constants it
// may stand for, or none known for a value named so (rep.eventType).
func (ev *eventReader) eventType(e ast.Expr, at *scope) (types []string, ok bool) {
	named := strings.EqualFold(lastName(e), "eventType")
	for _, l := range ev.flow.leaves(e, at, 0) {
		sel, isSel := l.expr.(*ast.SelectorExpr)
		if !isSel {
			return nil, named
		}
		id, isID := sel.X.(*ast.Ident)
		if !isID || l.file.imports[id.Name] != coreV1 || eventTypes[sel.Sel.Name] == "" {
			return nil, named || strings.EqualFold(sel.Sel.Name, "eventType")
		}
		types = append(types, eventTypes[sel.Sel.Name])
	}
	return types, len(types) > 0
}

// reasons are the Reason constants e may stand for; computed when it may
// also be something else.
func (ev *eventReader) reasons(e ast.Expr, at *scope) (out []constRef, computed bool, err error) {
	for _, l := range ev.flow.leaves(e, at, 0) {
		c, ok, err := ev.reasonConst(l)
		if err != nil {
			return nil, false, err
		}
		if ok {
			out = append(out, c)
		} else {
			computed = true
		}
	}
	return out, computed, nil
}

// reasonConst is the Reason constant l names: pkg.ReasonX, or ReasonX of
// this package.
func (ev *eventReader) reasonConst(l leaf) (constRef, bool, error) {
	var p *goPackage
	var name string
	switch e := l.expr.(type) {
	case *ast.SelectorExpr:
		id, ok := e.X.(*ast.Ident)
		if !ok {
			return constRef{}, false, nil
		}
		var err error
		if p, err = ev.src.byImportPath(l.file.imports[id.Name]); err != nil || p == nil {
			return constRef{}, false, err
		}
		name = e.Sel.Name
	case *ast.Ident:
		p, name = ev.pkg, e.Name
	default:
		return constRef{}, false, nil
	}
	if !strings.HasPrefix(name, "Reason") {
		return constRef{}, false, nil
	}
	v, ok := p.constValue(name)
	if !ok {
		return constRef{}, false, nil
	}
	return constRef{Value: v, Const: strings.TrimPrefix(p.Dir, "api/") + "." + name}, true, nil
}

// lastName is the last name of an identifier or selector.
func lastName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// writeEvents writes the reasons of the Events, by reason.
func writeEvents(p *page, scan *eventScan) {
	p.heading(2, "Event reasons")
	p.line("The reasons of the Events the operator records (`kubectl get events`, `kubectl describe`), as its")
	p.line("sources (%s) give them, with the Event type given with them.\n", strings.Join(codeList(eventDirs), ", "))
	keys := make([]string, 0, len(scan.reasons))
	for k := range scan.reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := scan.reasons[keys[i]], scan.reasons[keys[j]]
		if a.Value != b.Value {
			return a.Value < b.Value
		}
		return a.Const < b.Const
	})
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		r := scan.reasons[k]
		rows = append(rows, []string{code(r.Value), orDash(strings.Join(sortedKeys(r.Types), ", ")), code(r.Const),
			strings.Join(codeList(sortedKeys(r.By)), ", ")})
	}
	p.table([]string{"Reason", colType, "Constant", "Recorded by"}, rows)
	if len(scan.computed) > 0 {
		p.line("These record Events whose reason is computed (a condition's reason, from the tables above, for")
		p.line("the most part): %s.\n", strings.Join(sortedKeys(scan.computed), ", "))
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
