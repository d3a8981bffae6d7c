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
	"go/types"
	"strings"
)

// The Events the controllers record, read from their sources with their
// types (typecheck.go): every call Eventf, Event or Record whose callee's
// parameters are named regarding (or object), eventtype and reason
// (events.EventRecorder, record.EventRecorder and clusterevent.Record all
// are). An Event's reason is often decided away from that call, in a value
// a function returns (a report, a notice), so the arguments are followed
// back (flow.go, fields.go, guards.go) to the constants they are given;
// when the type and the reason are two fields of one value, each value's
// type goes with its own reason. The regarding object's type gives the kind
// the Event is recorded on. A call whose reason is not (only) constants
// there is named as computed.

// eventDirs are where the manager records Events: the controllers, and the
// storage migration (Events on the CRDs).
var eventDirs = []string{"internal/controller", "internal/migration"}

// coreV1 is where the Event types are declared.
const coreV1 = "k8s.io/api/core/v1"

var eventTypes = map[string]string{"EventTypeNormal": "Normal", "EventTypeWarning": "Warning"}

// recorders are the names of the calls that record an Event.
var recorders = map[string]bool{"Eventf": true, "Event": true, "Record": true}

// eventReason is one reason constant used on Events of one kind.
type eventReason struct {
	Value, Const string // "Deleted", "vault/v1beta1.ReasonDeleted"
	// Kind is the kind of the object the Events are recorded on; empty
	// when it is not known.
	Kind  string
	Types map[string]bool // Normal, Warning
}

// eventScan is what the sources say of the Events.
type eventScan struct {
	reasons map[[2]string]*eventReason // by Const and Kind
	// computed are the calls whose reason is not (only) constants, as
	// `file` (function).
	computed map[string]bool
}

func scanEvents(src *sources) (*eventScan, error) {
	var dirs []string
	for _, top := range eventDirs {
		d, err := src.dirs(top)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, d...)
	}
	pkgs, err := src.typeCheck(dirs)
	if err != nil {
		return nil, err
	}
	scan := &eventScan{reasons: map[[2]string]*eventReason{}, computed: map[string]bool{}}
	for _, p := range pkgs {
		scan.pkg(&eventReader{module: src.module, flow: newFlow(p)})
	}
	if len(scan.reasons) == 0 {
		return nil, fmt.Errorf("no Event reason found under %s", strings.Join(eventDirs, ", "))
	}
	return scan, nil
}

// pkg reads the recording calls of one package.
func (scan *eventScan) pkg(ev *eventReader) {
	for _, f := range ev.flow.Files {
		for _, d := range f.AST.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !recorders[calleeName(call)] {
					return true
				}
				if args, ok := ev.recording(call); ok {
					scan.call(ev, call, args, fmt.Sprintf("`%s` (%s)", f.Name, fd.Name.Name))
				}
				return true
			})
		}
	}
}

// call reads one recording call: the kinds of its object, and its types
// with their reasons.
func (scan *eventScan) call(ev *eventReader, call *ast.CallExpr, args recordingArgs, site string) {
	kinds := ev.kinds(call.Args[args.regarding])
	for _, held := range ev.flow.eventFields(call.Args[args.eventType], call.Args[args.reason]) {
		types := ev.eventTypes(held.first)
		reasons, computed := ev.reasons(held.second)
		if computed {
			scan.computed[site] = true
		}
		for _, c := range reasons {
			for _, k := range kinds {
				scan.add(c, k, types)
			}
		}
	}
}

func (scan *eventScan) add(c constRef, kind string, types []string) {
	key := [2]string{c.Const, kind}
	r := scan.reasons[key]
	if r == nil {
		r = &eventReason{Value: c.Value, Const: c.Const, Kind: kind, Types: map[string]bool{}}
		scan.reasons[key] = r
	}
	for _, t := range types {
		r.Types[t] = true
	}
}

// constRef is a string constant of the manager's module.
type constRef struct{ Value, Const string }

// eventReader classifies what the flow of one package leads to.
type eventReader struct {
	module string // the manager's module path
	flow   *flow
}

// recordingArgs are the positions of a recording call's arguments.
type recordingArgs struct{ regarding, eventType, reason int }

// recording finds the Event's arguments by the names of the callee's
// parameters: regarding (or object), eventtype, reason.
func (ev *eventReader) recording(call *ast.CallExpr) (recordingArgs, bool) {
	sig, ok := ev.flow.info.TypeOf(call.Fun).(*types.Signature)
	if !ok {
		return recordingArgs{}, false
	}
	args := recordingArgs{regarding: -1, eventType: -1, reason: -1}
	for i := range sig.Params().Len() {
		switch strings.ToLower(sig.Params().At(i).Name()) {
		case "regarding", "object":
			args.regarding = i
		case "eventtype":
			args.eventType = i
		case "reason":
			args.reason = i
		}
	}
	ok = args.regarding >= 0 && args.eventType >= 0 && args.reason >= 0 && len(call.Args) > max(args.regarding, args.eventType, args.reason)
	return args, ok
}

// eventFields are the types and reasons a call's arguments may be, paired
// by value when both are fields of one (n.eventType, n.reason), or, when
// the reason is a variable, the type read for each reason it may hold.
func (fl *flow) eventFields(typeArg, reasonArg ast.Expr) []heldTogether {
	ts, tok := ast.Unparen(typeArg).(*ast.SelectorExpr)
	rs, rok := ast.Unparen(reasonArg).(*ast.SelectorExpr)
	if tok && rok {
		tf, rf := fl.localField(ts), fl.localField(rs)
		if tf != nil && rf != nil && sameVar(fl, ts.X, rs.X) {
			return fl.together(ts.X, tf, rf)
		}
	}
	reasons := fl.leaves(value{expr: reasonArg}, nil, 0)
	id, _ := ast.Unparen(reasonArg).(*ast.Ident)
	x := fl.varOf(id)
	if x == nil || !fl.local(x) {
		return []heldTogether{{fl.leaves(value{expr: typeArg}, nil, 0), reasons}}
	}
	var out []heldTogether
	for _, r := range reasons {
		var at *frame
		if c := fl.constOf(r.expr); c != nil {
			at = assuming(x, c)
		}
		out = append(out, heldTogether{fl.leaves(value{expr: typeArg}, at, 0), []leaf{r}})
	}
	return out
}

// sameVar says whether a and b name one local variable.
func sameVar(fl *flow, a, b ast.Expr) bool {
	ai, _ := ast.Unparen(a).(*ast.Ident)
	bi, _ := ast.Unparen(b).(*ast.Ident)
	x := fl.varOf(ai)
	return x != nil && x == fl.varOf(bi)
}

// kinds are the kinds of the object an Event is recorded on: its type's,
// or where it is an interface (client.Object), the types of the values it
// is given. One empty kind when none is known.
func (ev *eventReader) kinds(e ast.Expr) []string {
	if k := kindOf(ev.flow.info.TypeOf(e)); k != "" {
		return []string{k}
	}
	seen := map[string]bool{}
	for _, l := range ev.flow.leaves(value{expr: e}, nil, 0) {
		if l.expr != nil {
			if k := kindOf(ev.flow.info.TypeOf(l.expr)); k != "" {
				seen[k] = true
			}
		}
	}
	if len(seen) == 0 {
		return []string{""}
	}
	return sortedKeys(seen)
}

// kindOf is the name of the struct type t is or points to: an API
// object's kind.
func kindOf(t types.Type) string {
	if t == nil {
		return ""
	}
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	if n, ok := t.(*types.Named); ok {
		if _, isStruct := n.Underlying().(*types.Struct); isStruct {
			return n.Obj().Name()
		}
	}
	return ""
}
