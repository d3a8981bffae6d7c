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

// A data flow over one package, enough to follow an Event's type and
// reason from the call that records it back to the constants they are
// given. go/types names what each name stands for, so it follows:
//   - a local variable, to what is assigned to it (reason := X);
//   - a parameter, to the arguments of the package's calls of its function
//     (a function, a method, or a closure bound to a variable): only to
//     those of the call the flow came in by, when it came in by one;
//   - a call of one of the package's functions, to what it returns;
//   - a field of one of the package's structs (rep.reason), to what the
//     value's composite literal and the stores into the field of the
//     variables it was held in put there (fields.go);
//   - but not into a branch under `x == C` where x holds other constants
//     (guards.go).
// The rest is a leaf: a constant, a zero value, or a value computed (a
// condition's reason read back, a result from another package).

// maxDepth bounds the steps of one flow: recursion, and long chains.
const maxDepth = 24

// function is a function, method or closure of the package.
type function struct {
	params, results []*ast.Ident // nil where unnamed; the receiver excluded
	// returns are its own, not those of the closures in it.
	returns []ret
	// calls are the package's calls of it.
	calls []*ast.CallExpr
}

// ret is a return statement, and the guards it is under.
type ret struct {
	stmt   *ast.ReturnStmt
	guards []guard
}

// value is an expression, or the result-th value of a call returning
// several (a, b := f()).
type value struct {
	expr   ast.Expr // nil: the zero value (var x T)
	result int
	// opaque: nothing is known of it (a range variable, a variable whose
	// address a call is given).
	opaque bool
	// guards are those of the assignment.
	guards []guard
}

// frame is a call the flow entered to read what the callee returns: the
// callee's parameters are that call's arguments.
type frame struct {
	fn   *function
	call *ast.CallExpr
	up   *frame // where call is read
	// assume are values given to variables (guards.go).
	assume map[*types.Var]string
}

// heldIn is a variable a value was held in, and the frame it was read in.
type heldIn struct {
	v  *types.Var
	at *frame
}

// leaf is where a flow stops: expr (nil for a zero value), read in the
// frame at, having been held in vars.
type leaf struct {
	expr ast.Expr
	at   *frame
	vars []heldIn
}

// store is x.f = v: v, and x when it is a variable.
type store struct {
	v    value
	base *ast.Ident
}

type param struct {
	fn    *function
	index int
	ident *ast.Ident
}

// flow is what one package's functions assign, store, return and call.
type flow struct {
	*typedPackage
	funcs   map[types.Object]*function // by *types.Func, or the variable a closure is bound to
	params  map[*types.Var]param
	assigns map[*types.Var][]value
	// stores are x.f = v by variable x and field f; fieldStores by field,
	// whatever the value stored into.
	stores      map[*types.Var]map[*types.Var][]value
	fieldStores map[*types.Var][]store
	// lits are the composite literals of each field's struct.
	lits    map[*types.Var][]*ast.CompositeLit
	boundTo map[*ast.FuncLit]*types.Var
	guards  []guarded
}

func newFlow(p *typedPackage) *flow {
	fl := &flow{typedPackage: p, funcs: map[types.Object]*function{}, params: map[*types.Var]param{},
		assigns: map[*types.Var][]value{}, stores: map[*types.Var]map[*types.Var][]value{},
		fieldStores: map[*types.Var][]store{}, lits: map[*types.Var][]*ast.CompositeLit{}, boundTo: map[*ast.FuncLit]*types.Var{}}
	for _, f := range p.Files {
		for _, d := range f.AST.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				fn := fl.function(fd.Type)
				if obj := p.info.Defs[fd.Name]; obj != nil {
					fl.funcs[obj] = fn
				}
				fl.walk(fd.Body, fn)
			}
		}
	}
	// Once every function is known: who calls each.
	for _, f := range p.Files {
		ast.Inspect(f.AST, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if fn := fl.callee(call); fn != nil {
					fn.calls = append(fn.calls, call)
				}
			}
			return true
		})
	}
	return fl
}

// function notes a function's parameters and named results.
func (fl *flow) function(typ *ast.FuncType) *function {
	fn := &function{}
	fn.params = fl.names(typ.Params)
	for i, id := range fn.params {
		if v := fl.varOf(id); v != nil {
			fl.params[v] = param{fn: fn, index: i, ident: id}
		}
	}
	fn.results = fl.names(typ.Results)
	return fn
}

// names are a field list's names, one per entry (nil where unnamed).
func (fl *flow) names(list *ast.FieldList) []*ast.Ident {
	if list == nil {
		return nil
	}
	var out []*ast.Ident
	for _, field := range list.List {
		if len(field.Names) == 0 {
			out = append(out, nil)
		}
		out = append(out, field.Names...)
	}
	return out
}

// walk notes what fn's body assigns, stores and returns, and the closures
// in it.
func (fl *flow) walk(body *ast.BlockStmt, fn *function) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			closure := fl.function(n.Type)
			if v := fl.boundTo[n]; v != nil {
				fl.funcs[v] = closure
			}
			fl.walk(n.Body, closure)
			return false
		case *ast.IfStmt, *ast.SwitchStmt:
			fl.noteGuards(n)
		case *ast.ReturnStmt:
			fn.returns = append(fn.returns, ret{stmt: n, guards: fl.guardsAt(n.Pos())})
		case *ast.AssignStmt:
			fl.assign(n)
		case *ast.ValueSpec:
			fl.declare(n)
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok {
					fl.assignTo(id, value{expr: id, opaque: true})
				}
			}
		case *ast.CallExpr:
			// f(&x): f may set x (errors.As, a client's Get).
			for _, arg := range n.Args {
				if u, ok := ast.Unparen(arg).(*ast.UnaryExpr); ok && u.Op == token.AND {
					if id, ok := ast.Unparen(u.X).(*ast.Ident); ok {
						fl.assignTo(id, value{expr: id, opaque: true})
					}
				}
			}
		case *ast.CompositeLit:
			fl.literal(n)
		}
		return true
	})
}

func (fl *flow) assign(as *ast.AssignStmt) {
	switch {
	case as.Tok != token.ASSIGN && as.Tok != token.DEFINE: // x += y: computed
		for _, l := range as.Lhs {
			fl.assignTo(l, value{expr: l, opaque: true})
		}
	case len(as.Lhs) == len(as.Rhs):
		for i, l := range as.Lhs {
			fl.assignTo(l, value{expr: as.Rhs[i]})
		}
	case len(as.Rhs) == 1: // a, b := f()
		for i, l := range as.Lhs {
			fl.assignTo(l, value{expr: as.Rhs[0], result: i})
		}
	}
}

func (fl *flow) declare(vs *ast.ValueSpec) {
	for i, id := range vs.Names {
		switch {
		case len(vs.Values) == 0:
			fl.assignTo(id, value{})
		case len(vs.Values) == len(vs.Names):
			fl.assignTo(id, value{expr: vs.Values[i]})
		default:
			fl.assignTo(id, value{expr: vs.Values[0], result: i})
		}
	}
}

// assignTo notes an assignment to a variable, or a store into a field.
func (fl *flow) assignTo(lhs ast.Expr, v value) {
	v.guards = fl.guardsAt(lhs.Pos())
	switch l := ast.Unparen(lhs).(type) {
	case *ast.Ident:
		x := fl.varOf(l)
		if x == nil {
			return
		}
		fl.assigns[x] = append(fl.assigns[x], v)
		if lit, ok := v.expr.(*ast.FuncLit); ok {
			fl.boundTo[lit] = x
		}
	case *ast.SelectorExpr:
		f := fl.localField(l)
		if f == nil {
			return
		}
		s := store{v: v}
		if id, ok := ast.Unparen(l.X).(*ast.Ident); ok {
			if x := fl.varOf(id); x != nil {
				if fl.stores[x] == nil {
					fl.stores[x] = map[*types.Var][]value{}
				}
				fl.stores[x][f] = append(fl.stores[x][f], v)
				s.base = id
			}
		}
		fl.fieldStores[f] = append(fl.fieldStores[f], s)
	}
}
