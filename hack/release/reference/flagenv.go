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
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// envVar is an environment variable the manager reads without a flag.
type envVar struct {
	Name, Doc string
}

// flagEnvs reads, in cmd's bindFlags, the environment variable each flag's
// default comes from: os.Getenv("X") itself, a helper of the package that
// reads its first argument with os.Getenv (f.envInt("X", 1)), or a field of
// a value a constructor fills from the environment (f.vault.Address, from
// vaultclient.ConfigFromEnv's Address: os.Getenv("VAULT_ADDR")). The
// variables read with no flag over them come back in envOnly.
func flagEnvs(src *sources) (byFlag map[string]string, envOnly []envVar, err error) {
	cmd, err := src.pkg("cmd")
	if err != nil {
		return nil, nil, err
	}
	bind := cmd.funcDecl("bindFlags")
	if bind == nil || len(bind.Type.Params.List) == 0 || len(bind.Type.Params.List[0].Names) == 0 {
		return nil, nil, fmt.Errorf("cmd: no func bindFlags(fs *flag.FlagSet)")
	}
	fs := bind.Type.Params.List[0].Names[0].Name
	fields, err := envFields(src, cmd, bind)
	if err != nil {
		return nil, nil, err
	}
	byFlag = map[string]string{}
	used := map[string]bool{} // the Getenv calls that set a flag's default
	ast.Inspect(bind.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || !isMethodOn(call, fs) {
			return true
		}
		name, def, ok := flagCall(call)
		if !ok {
			return true
		}
		if env := envOf(cmd, def, fields); env != "" {
			byFlag[name] = env
			used[env] = true
			markGetenv(def, used)
		}
		return true
	})
	// os.Getenv outside any flag's default: an environment-only setting.
	ast.Inspect(bind.Body, func(n ast.Node) bool {
		stmt, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for _, rhs := range stmt.Rhs {
			if env := getenvIn(rhs); env != "" && !used[env] {
				envOnly = append(envOnly, envVar{Name: env, Doc: "Read as `" + src.text(stmt) + "`."})
				used[env] = true
			}
		}
		return true
	})
	for _, f := range fields.order {
		if env := fields.env[f]; !used[env] {
			envOnly = append(envOnly, envVar{Name: env, Doc: fields.doc[f]})
			used[env] = true
		}
	}
	return byFlag, envOnly, nil
}

// flagCall is the name and default expression of fs.StringVar(&p, name,
// def, usage) or fs.String(name, def, usage).
func flagCall(call *ast.CallExpr) (name string, def ast.Expr, ok bool) {
	method := call.Fun.(*ast.SelectorExpr).Sel.Name
	i := 0
	if strings.HasSuffix(method, "Var") {
		i = 1
	}
	if len(call.Args) != i+3 {
		return "", nil, false
	}
	name, ok = stringLit(call.Args[i])
	return name, call.Args[i+1], ok
}

// isMethodOn says whether call is recv.Method(...).
func isMethodOn(call *ast.CallExpr, recv string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == recv
}

var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// envOf is the environment variable a flag's default expression reads.
func envOf(cmd *goPackage, def ast.Expr, fields *fieldEnvs) string {
	if env := getenvIn(def); env != "" {
		return env
	}
	switch e := def.(type) {
	case *ast.CallExpr:
		// A helper of cmd that reads its first argument: f.envBool("X", true).
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && len(e.Args) > 0 {
			if env, ok := stringLit(e.Args[0]); ok && envName.MatchString(env) && cmd.readsEnvOfFirstParam(sel.Sel.Name) {
				return env
			}
		}
	case *ast.SelectorExpr:
		// f.vault.Address: the field path after the receiver.
		path := selectorPath(e)
		if _, rest, ok := strings.Cut(path, "."); ok {
			return fields.env[rest]
		}
	}
	return ""
}

// getenvIn is X of the first os.Getenv("X") in e.
func getenvIn(e ast.Node) string {
	var env string
	ast.Inspect(e, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && env == "" && isCall(call, "os", "Getenv") && len(call.Args) == 1 {
			env, _ = stringLit(call.Args[0])
		}
		return env == ""
	})
	return env
}

func markGetenv(e ast.Node, used map[string]bool) {
	if env := getenvIn(e); env != "" {
		used[env] = true
	}
}

// fieldEnvs are the fields of bindFlags' value filled from the
// environment by a constructor: "vault.Address" → VAULT_ADDR.
type fieldEnvs struct {
	env   map[string]string
	doc   map[string]string
	order []string
}

// envFields reads the composite literal bindFlags starts from
// (&managerFlags{vault: vaultclient.ConfigFromEnv()}) and, in each
// constructor it calls, the fields set from os.Getenv.
func envFields(src *sources, cmd *goPackage, bind *ast.FuncDecl) (*fieldEnvs, error) {
	out := &fieldEnvs{env: map[string]string{}, doc: map[string]string{}}
	var err error
	ast.Inspect(bind.Body, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok || err != nil {
			return true
		}
		key, ok := kv.Key.(*ast.Ident)
		call, isCall := kv.Value.(*ast.CallExpr)
		if !ok || !isCall {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkgID, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		var pkg *goPackage
		if pkg, err = src.imported(cmd, bind, pkgID.Name); err != nil || pkg == nil {
			return true
		}
		ctor := pkg.funcDecl(sel.Sel.Name)
		if ctor == nil {
			return true
		}
		ast.Inspect(ctor.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			for _, el := range lit.Elts {
				fkv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				fieldID, ok := fkv.Key.(*ast.Ident)
				if env := getenvIn(fkv.Value); ok && env != "" {
					field := fieldID.Name
					path := key.Name + "." + field
					out.env[path] = env
					out.doc[path] = sentence(pkg.fieldDoc(lit, field))
					out.order = append(out.order, path)
				}
			}
			return false
		})
		return true
	})
	return out, err
}

// isCall says whether call is pkg.name(...).
func isCall(call *ast.CallExpr, pkg, name string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

// selectorPath is a.b.c for the expression a.b.c.
func selectorPath(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if p := selectorPath(e.X); p != "" {
			return p + "." + e.Sel.Name
		}
	}
	return ""
}

// stringLit is the value of a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// text is n's source, as gofmt prints it.
func (s *sources) text(n ast.Node) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, s.fset, n)
	return b.String()
}
