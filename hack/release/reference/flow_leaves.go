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

// varOf is the variable (not a field) id names, if any.
func (fl *flow) varOf(id *ast.Ident) *types.Var {
	if id == nil {
		return nil
	}
	obj := fl.info.Defs[id]
	if obj == nil {
		obj = fl.info.Uses[id]
	}
	if v, ok := obj.(*types.Var); ok && !v.IsField() {
		return v
	}
	return nil
}

// callee is the package's function call calls, if it is one.
func (fl *flow) callee(call *ast.CallExpr) *function {
	var obj types.Object
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		obj = fl.info.Uses[fun]
	case *ast.SelectorExpr:
		if sel := fl.info.Selections[fun]; sel != nil {
			obj = sel.Obj()
		} else {
			obj = fl.info.Uses[fun.Sel] // pkg.F
		}
	}
	if f, ok := obj.(*types.Func); ok {
		obj = f.Origin()
	}
	return fl.funcs[obj]
}

// leaves are what v, read in frame at, may stand for.
func (fl *flow) leaves(v value, at *frame, depth int) []leaf {
	switch {
	case v.expr == nil:
		return []leaf{{at: at}}
	case v.opaque || depth > maxDepth:
		return []leaf{{expr: v.expr, at: at}}
	}
	switch e := ast.Unparen(v.expr).(type) {
	case *ast.Ident:
		if _, isNil := fl.info.Uses[e].(*types.Nil); isNil {
			return []leaf{{at: at}}
		}
		if x := fl.varOf(e); x != nil && fl.local(x) {
			return fl.variable(x, e, at, depth+1)
		}
	case *ast.UnaryExpr:
		// &x: the pointer leads to x (&T{…} is a literal: a leaf).
		if id, ok := ast.Unparen(e.X).(*ast.Ident); ok && e.Op == token.AND {
			return fl.leaves(value{expr: id}, at, depth+1)
		}
	case *ast.SelectorExpr:
		if f := fl.localField(e); f != nil {
			var out []leaf
			for _, o := range fl.leaves(value{expr: e.X}, at, depth+1) {
				out = append(out, fl.fieldOf(o, f, depth+1)...)
			}
			return out
		}
	case *ast.StarExpr:
		return fl.leaves(value{expr: e.X}, at, depth+1)
	case *ast.CallExpr:
		if fn := fl.callee(e); fn != nil {
			return fl.returned(fn, e, v.result, at, depth+1)
		}
		if tv, ok := fl.info.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			return fl.leaves(value{expr: e.Args[0]}, at, depth+1) // a conversion
		}
	}
	return []leaf{{expr: v.expr, at: at}}
}

// local says whether x is a variable of one of the package's functions.
func (fl *flow) local(x *types.Var) bool {
	return x.Pkg() == fl.types && x.Parent() != fl.types.Scope()
}

// variable is what was assigned to x, or given for it as a parameter;
// each leaf notes that it was held in x.
func (fl *flow) variable(x *types.Var, id *ast.Ident, at *frame, depth int) []leaf {
	var out []leaf
	for _, v := range fl.assigns[x] {
		if fl.feasible(v.guards, at, depth) {
			out = append(out, fl.leaves(v, at, depth)...)
		}
	}
	p, isParam := fl.params[x]
	if isParam {
		out = append(out, fl.arguments(p, at, depth)...)
	}
	if len(fl.assigns[x]) == 0 && !isParam {
		out = []leaf{{expr: id, at: at}} // a type switch's variable
	}
	for i := range out {
		out[i].vars = append([]heldIn{{v: x, at: at}}, out[i].vars...)
	}
	return out
}

// arguments are what the calls of p's function pass for it: the call the
// flow came in by, or every call in the package.
func (fl *flow) arguments(p param, at *frame, depth int) []leaf {
	if at != nil && at.fn == p.fn {
		return fl.argument(at.call, p, at.up, depth)
	}
	if len(p.fn.calls) == 0 {
		return []leaf{{expr: p.ident}} // called from elsewhere
	}
	var out []leaf
	for _, call := range p.fn.calls {
		out = append(out, fl.argument(call, p, nil, depth)...)
	}
	return out
}

func (fl *flow) argument(call *ast.CallExpr, p param, at *frame, depth int) []leaf {
	switch {
	case len(call.Args) == 1 && len(p.fn.params) > 1: // f(g())
		return fl.leaves(value{expr: call.Args[0], result: p.index}, at, depth)
	case p.index < len(call.Args):
		return fl.leaves(value{expr: call.Args[p.index]}, at, depth)
	}
	return []leaf{{expr: call, at: at}}
}

// returned is what fn returns as its result-th value to call.
func (fl *flow) returned(fn *function, call *ast.CallExpr, result int, at *frame, depth int) []leaf {
	in := &frame{fn: fn, call: call, up: at}
	var out []leaf
	for _, r := range fn.returns {
		if !fl.feasible(r.guards, in, depth) {
			continue
		}
		ret := r.stmt
		switch {
		case len(ret.Results) == 0: // named results
			if result < len(fn.results) && fn.results[result] != nil {
				out = append(out, fl.leaves(value{expr: fn.results[result]}, in, depth)...)
			}
		case len(ret.Results) == 1 && len(fn.results) > 1: // return g()
			out = append(out, fl.leaves(value{expr: ret.Results[0], result: result}, in, depth)...)
		case result < len(ret.Results):
			out = append(out, fl.leaves(value{expr: ret.Results[result]}, in, depth)...)
		}
	}
	return out
}
