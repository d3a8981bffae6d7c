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
	"go/types"
)

// The fields of the package's structs, in the flow (flow.go): a
// controller often decides an Event in a value (a report, a notice) that
// a call further on records. What a field of a value holds is read from
// where the value comes from:
//   - its composite literal (keyed or positional), reached through the
//     variables, parameters and returns the value went through;
//   - the stores into that field of the variables it was held in
//     (r.reason = X after r := refused(…));
//   - for a value whose origin is not known (a range variable over a
//     slice, a value from elsewhere): every composite literal of its struct
//     and every store into the field in the package.

// localField is the field of one of the package's structs sel selects.
func (fl *flow) localField(sel *ast.SelectorExpr) *types.Var {
	s := fl.info.Selections[sel]
	if s == nil || s.Kind() != types.FieldVal {
		return nil
	}
	f, ok := s.Obj().(*types.Var)
	if !ok || f.Pkg() != fl.types {
		return nil
	}
	return f.Origin()
}

// literal notes a composite literal of one of the package's structs under
// each of its fields.
func (fl *flow) literal(lit *ast.CompositeLit) {
	st := structOf(fl.info.TypeOf(lit))
	if st == nil {
		return
	}
	for i := range st.NumFields() {
		if f := st.Field(i).Origin(); f.Pkg() == fl.types {
			fl.lits[f] = append(fl.lits[f], lit)
		}
	}
}

// structOf is the struct t is, or points to.
func structOf(t types.Type) *types.Struct {
	if t == nil {
		return nil
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, _ := t.Underlying().(*types.Struct)
	return st
}

// literalOf is the composite literal e is (T{…} or &T{…}).
func literalOf(e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

// element is what lit gives field f; nil when it leaves it zero.
func (fl *flow) element(lit *ast.CompositeLit, f *types.Var) ast.Expr {
	st := structOf(fl.info.TypeOf(lit))
	if st == nil {
		return nil
	}
	for i, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok {
				if kf, ok := fl.info.Uses[key].(*types.Var); ok && kf.Origin() == f {
					return kv.Value
				}
			}
			continue
		}
		if i < st.NumFields() && st.Field(i).Origin() == f {
			return el
		}
	}
	return nil
}

// known says whether the origin of struct value o is known: a composite
// literal, or a zero value.
func known(o leaf) bool {
	return o.expr == nil || literalOf(o.expr) != nil
}

// fieldOf is what field f of the struct value o may hold.
func (fl *flow) fieldOf(o leaf, f *types.Var, depth int) []leaf {
	out := fl.stored(o, f, depth)
	switch {
	case o.expr == nil: // the zero value: only what is stored
	case literalOf(o.expr) != nil:
		if el := fl.element(literalOf(o.expr), f); el != nil {
			out = append(out, fl.leaves(value{expr: el}, o.at, depth)...)
		}
	default:
		for _, lit := range fl.lits[f] {
			out = append(out, fl.fieldOf(leaf{expr: lit}, f, depth)...)
		}
	}
	return out
}

// stored is what is stored into field f of the variables o was held in;
// for a value of unknown origin, into f of any variable.
func (fl *flow) stored(o leaf, f *types.Var, depth int) []leaf {
	out := fl.storedIn(o.vars, f, depth)
	if !known(o) {
		for _, s := range fl.fieldStores[f] {
			out = append(out, fl.leaves(s.v, nil, depth)...)
		}
	}
	return out
}

// heldTogether is what two fields of one struct value hold.
type heldTogether struct{ first, second []leaf }

// together is, for each struct value e may be, what its fields first and
// second hold, so that a literal's type stays with its own reason.
func (fl *flow) together(e ast.Expr, first, second *types.Var) []heldTogether {
	return fl.togetherFrom(e, first, second, map[*types.Var]bool{})
}

// togetherFrom is together; a value of unknown origin stands for each
// composite literal of its struct apart, and for each variable stored into
// the fields (as its own origins say; seen are the variables done).
func (fl *flow) togetherFrom(e ast.Expr, first, second *types.Var, seen map[*types.Var]bool) []heldTogether {
	var out []heldTogether
	for _, o := range fl.leaves(value{expr: e}, nil, 0) {
		if known(o) {
			out = append(out, heldTogether{fl.fieldOf(o, first, 0), fl.fieldOf(o, second, 0)})
			continue
		}
		for _, lit := range fl.lits[second] {
			lo := leaf{expr: lit}
			out = append(out, heldTogether{fl.fieldOf(lo, first, 0), fl.fieldOf(lo, second, 0)})
		}
		// What is stored into o's own variables, or into no variable
		// (a.b.reason = X), cannot be paired: apart.
		loose := heldTogether{fl.storedIn(o.vars, first, 0), fl.storedIn(o.vars, second, 0)}
		for i, f := range []*types.Var{first, second} {
			for _, s := range fl.fieldStores[f] {
				x := fl.varOf(s.base)
				switch {
				case x == nil && i == 0:
					loose.first = append(loose.first, fl.leaves(s.v, nil, 0)...)
				case x == nil:
					loose.second = append(loose.second, fl.leaves(s.v, nil, 0)...)
				case !seen[x]:
					seen[x] = true
					out = append(out, fl.togetherFrom(s.base, first, second, seen)...)
				}
			}
		}
		out = append(out, loose)
	}
	return out
}

// storedIn is what is stored into field f of the variables held.
func (fl *flow) storedIn(held []heldIn, f *types.Var, depth int) []leaf {
	var out []leaf
	for _, h := range held {
		for _, v := range fl.stores[h.v][f] {
			if fl.feasible(v.guards, h.at, depth) {
				out = append(out, fl.leaves(v, h.at, depth)...)
			}
		}
	}
	return out
}
