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
)

// A light data flow over one package's functions, enough to follow an
// Event's type or reason from the call that records it back to the
// constants it is given: through local variables (reason := X), through
// the parameters of a function or of a closure bound to a name (fail :=
// func(reason string) …; fail(X, …)), to the arguments of their callers in
// the same package. Anything else (a field, a call's result) is a leaf
// that is not a constant: the reason is computed.

// scope is one function or closure.
type scope struct {
	node    ast.Node // *ast.FuncDecl or *ast.FuncLit
	decl    *ast.FuncDecl
	name    string // its name, or the local name a closure is bound to
	params  []string
	assigns map[string][]ast.Expr // outside nested closures
	parent  *scope
	file    *goFile
}

// leaf is an expression the flow stops at, and the file it is in (whose
// imports name its packages).
type leaf struct {
	expr ast.Expr
	file *goFile
}

// flow holds the scopes of one package.
type flow struct {
	pkg    *goPackage
	scopes []*scope
}

func newFlow(p *goPackage) *flow {
	fl := &flow{pkg: p}
	for _, f := range p.Files {
		for _, d := range f.AST.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				s := fl.add(fd, fd, fd.Name.Name, fd.Type, nil, f)
				fl.walk(fd.Body, s)
			}
		}
	}
	return fl
}

func (fl *flow) add(node ast.Node, decl *ast.FuncDecl, name string, typ *ast.FuncType, parent *scope, f *goFile) *scope {
	s := &scope{node: node, decl: decl, name: name, parent: parent, file: f, assigns: map[string][]ast.Expr{}}
	for _, field := range typ.Params.List {
		for _, n := range field.Names {
			s.params = append(s.params, n.Name)
		}
	}
	fl.scopes = append(fl.scopes, s)
	return s
}

// walk records the assignments of s's body and the scopes of its closures.
func (fl *flow) walk(body ast.Node, s *scope) {
	bound := map[*ast.FuncLit]string{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			child := fl.add(n, s.decl, bound[n], n.Type, s, s.file)
			fl.walk(n.Body, child)
			return false
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						s.assigns[id.Name] = append(s.assigns[id.Name], n.Rhs[i])
						if lit, ok := n.Rhs[i].(*ast.FuncLit); ok {
							bound[lit] = id.Name
						}
					}
				}
			}
		case *ast.ValueSpec:
			if len(n.Names) == len(n.Values) {
				for i, id := range n.Names {
					s.assigns[id.Name] = append(s.assigns[id.Name], n.Values[i])
				}
			}
		}
		return true
	})
}

// scopeAt is the innermost scope holding pos.
func (fl *flow) scopeAt(pos token.Pos) *scope {
	var best *scope
	for _, s := range fl.scopes {
		if s.node.Pos() <= pos && pos < s.node.End() && (best == nil || s.node.Pos() >= best.node.Pos()) {
			best = s
		}
	}
	return best
}

// maxDepth bounds the flow through variables and callers.
const maxDepth = 6

// leaves are what e, in scope s, may stand for.
func (fl *flow) leaves(e ast.Expr, s *scope, depth int) []leaf {
	if p, ok := e.(*ast.ParenExpr); ok {
		return fl.leaves(p.X, s, depth)
	}
	id, ok := e.(*ast.Ident)
	if !ok || depth > maxDepth {
		return []leaf{{e, s.file}}
	}
	for sc := s; sc != nil; sc = sc.parent {
		if values, ok := sc.assigns[id.Name]; ok {
			var out []leaf
			for _, v := range values {
				out = append(out, fl.leaves(v, sc, depth+1)...)
			}
			return out
		}
		for i, p := range sc.params {
			if p == id.Name {
				return fl.callerArgs(sc, i, depth+1)
			}
		}
	}
	return []leaf{{e, s.file}} // a package-level name
}

// callerArgs are what the i-th argument of the calls to s may stand for:
// the calls in its enclosing function for a closure, in the package for a
// function or method.
func (fl *flow) callerArgs(s *scope, i, depth int) []leaf {
	var out []leaf
	unknown := []leaf{{ast.NewIdent(s.params[i]), s.file}}
	if s.name == "" {
		return unknown
	}
	var regions []ast.Node
	if _, closure := s.node.(*ast.FuncLit); closure {
		regions = []ast.Node{s.decl}
	} else {
		for _, f := range fl.pkg.Files {
			regions = append(regions, f.AST)
		}
	}
	for _, region := range regions {
		ast.Inspect(region, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || calleeName(call) != s.name {
				return true
			}
			at := fl.scopeAt(call.Pos())
			if at == nil || otherPackage(call, at.file) {
				return true
			}
			if i >= len(call.Args) || len(call.Args) != len(s.params) {
				out = append(out, unknown...)
				return true
			}
			out = append(out, fl.leaves(call.Args[i], at, depth)...)
			return true
		})
	}
	if len(out) == 0 {
		return unknown
	}
	return out
}

// calleeName is f of f(…) or x.f(…).
func calleeName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}

// otherPackage says whether call is pkg.f(…) of an imported package.
func otherPackage(call *ast.CallExpr, f *goFile) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	_, imported := f.imports[id.Name]
	return imported
}
