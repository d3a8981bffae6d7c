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
	"go/token"
	"go/types"
)

// Branches taken only when a local variable holds some constant, in the
// flow (flow.go): `if reason == ReasonVaultError { reason = ReasonVaultUnavailable }`,
// `switch reason { case ReasonX: … }`. What such a branch assigns or
// returns is left out where the flow knows the variable holds other
// constants only: a call passing ReasonDeleteFailed does not record
// VaultUnavailable. A frame may also assume a variable's value: an Event
// type is read once for each reason it goes with (`eventType = Warning`
// under `reason == ReasonNotOwned` is NotOwned's only).

// guard is the condition that x holds one of the constant values in.
type guard struct {
	x  *types.Var
	in []string // constant.Value.ExactString()
}

// guarded is a stretch of source under a guard.
type guarded struct {
	from, to token.Pos
	g        guard
}

// noteGuards notes the branches n opens under a guard.
func (fl *flow) noteGuards(n ast.Node) {
	switch n := n.(type) {
	case *ast.IfStmt:
		for _, g := range fl.conditionGuards(n.Cond) {
			fl.guards = append(fl.guards, guarded{from: n.Body.Pos(), to: n.Body.End(), g: g})
		}
	case *ast.SwitchStmt:
		for _, s := range n.Body.List {
			cc, ok := s.(*ast.CaseClause)
			if !ok || len(cc.List) == 0 {
				continue
			}
			var gs []guard
			if n.Tag == nil {
				if len(cc.List) == 1 {
					gs = fl.conditionGuards(cc.List[0])
				}
			} else if g, ok := fl.caseGuard(n.Tag, cc.List); ok {
				gs = []guard{g}
			}
			for _, g := range gs {
				fl.guards = append(fl.guards, guarded{from: cc.Colon, to: cc.End(), g: g})
			}
		}
	}
}

// conditionGuards are the x == C of a condition, and of its && terms.
func (fl *flow) conditionGuards(cond ast.Expr) []guard {
	b, ok := ast.Unparen(cond).(*ast.BinaryExpr)
	if !ok {
		return nil
	}
	switch b.Op {
	case token.LAND:
		return append(fl.conditionGuards(b.X), fl.conditionGuards(b.Y)...)
	case token.EQL:
		if g, ok := fl.caseGuard(b.X, []ast.Expr{b.Y}); ok {
			return []guard{g}
		}
		if g, ok := fl.caseGuard(b.Y, []ast.Expr{b.X}); ok {
			return []guard{g}
		}
	}
	return nil
}

// caseGuard is x ∈ values, when x is a local variable and values are
// constants.
func (fl *flow) caseGuard(x ast.Expr, values []ast.Expr) (guard, bool) {
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok {
		return guard{}, false
	}
	v := fl.varOf(id)
	if v == nil || !fl.local(v) {
		return guard{}, false
	}
	g := guard{x: v}
	for _, e := range values {
		tv, ok := fl.info.Types[e]
		if !ok || tv.Value == nil {
			return guard{}, false
		}
		g.in = append(g.in, tv.Value.ExactString())
	}
	return g, true
}

// guardsAt are the guards a statement at pos is under.
func (fl *flow) guardsAt(pos token.Pos) []guard {
	var out []guard
	for _, gd := range fl.guards {
		if gd.from <= pos && pos < gd.to {
			out = append(out, gd.g)
		}
	}
	return out
}

// feasible says whether a statement under guards may run in frame at:
// not when a guard's variable is known to hold other constants only.
func (fl *flow) feasible(guards []guard, at *frame, depth int) bool {
	for _, g := range guards {
		held, known := fl.constants(g.x, at, depth)
		if !known {
			continue
		}
		match := false
		for _, c := range g.in {
			match = match || held[c]
		}
		if !match {
			return false
		}
	}
	return true
}

// constants are the constant values x may hold, read in frame at, leaving
// out the assignments under a guard (they depend on what x holds already);
// known is false when x may hold something else.
func (fl *flow) constants(x *types.Var, at *frame, depth int) (held map[string]bool, known bool) {
	for f := at; f != nil; f = f.up {
		if c, ok := f.assume[x]; ok {
			return map[string]bool{c: true}, true
		}
	}
	if depth > maxDepth {
		return nil, false
	}
	var ls []leaf
	for _, v := range fl.assigns[x] {
		if len(v.guards) == 0 {
			ls = append(ls, fl.leaves(v, at, depth+1)...)
		}
	}
	if p, ok := fl.params[x]; ok {
		ls = append(ls, fl.arguments(p, at, depth+1)...)
	}
	held = map[string]bool{}
	for _, l := range ls {
		tv, ok := fl.info.Types[l.expr]
		if l.expr == nil || !ok || tv.Value == nil {
			return nil, false
		}
		held[tv.Value.ExactString()] = true
	}
	return held, len(held) > 0
}

// assuming is a frame in which x holds the constant c.
func assuming(x *types.Var, c *types.Const) *frame {
	return &frame{assume: map[*types.Var]string{x: c.Val().ExactString()}}
}
