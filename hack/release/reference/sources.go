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
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// sources parses the repository's Go packages on demand (not their tests):
// the reference reads constants, doc comments and a few calls from them.
type sources struct {
	root, module string
	fset         *token.FileSet
	pkgs         map[string]*goPackage // by directory, relative to root
}

// goPackage is one parsed package directory.
type goPackage struct {
	Dir, ImportPath string
	Files           []*goFile
}

type goFile struct {
	Name    string // relative to root
	AST     *ast.File
	imports map[string]string // name in the file → import path
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+(\S+)`)

func newSources(root string) (*sources, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("read the manager's go.mod: %w", err)
	}
	m := moduleLine.FindSubmatch(mod)
	if m == nil {
		return nil, fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
	}
	return &sources{root: root, module: string(m[1]), fset: token.NewFileSet(), pkgs: map[string]*goPackage{}}, nil
}

// pkg parses the package in dir (relative to root, slash-separated).
func (s *sources) pkg(dir string) (*goPackage, error) {
	if p, ok := s.pkgs[dir]; ok {
		return p, nil
	}
	names, err := filepath.Glob(filepath.Join(s.root, filepath.FromSlash(dir), "*.go"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	sort.Strings(names)
	p := &goPackage{Dir: dir, ImportPath: path.Join(s.module, dir)}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(s.fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		rel, _ := filepath.Rel(s.root, name)
		gf := &goFile{Name: filepath.ToSlash(rel), AST: f, imports: map[string]string{}}
		for _, imp := range f.Imports {
			ipath, _ := strconv.Unquote(imp.Path.Value)
			local := path.Base(ipath)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			gf.imports[local] = ipath
		}
		p.Files = append(p.Files, gf)
	}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("no Go file in %s", dir)
	}
	s.pkgs[dir] = p
	return p, nil
}

// byImportPath parses the package of an import path of the manager's
// module; nil for another module's.
func (s *sources) byImportPath(ipath string) (*goPackage, error) {
	rest, ok := strings.CutPrefix(ipath, s.module+"/")
	if !ok {
		return nil, nil
	}
	return s.pkg(rest)
}

// imported is the package that name stands for in the file declaring fn.
func (s *sources) imported(p *goPackage, fn ast.Node, name string) (*goPackage, error) {
	f := p.fileOf(fn)
	if f == nil {
		return nil, nil
	}
	return s.byImportPath(f.imports[name])
}

// fileOf is the file holding n.
func (p *goPackage) fileOf(n ast.Node) *goFile {
	for _, f := range p.Files {
		if f.AST.Pos() <= n.Pos() && n.End() <= f.AST.End() {
			return f
		}
	}
	return nil
}

// funcDecl is the function or method of that name.
func (p *goPackage) funcDecl(name string) *ast.FuncDecl {
	for _, f := range p.Files {
		for _, d := range f.AST.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name && fn.Body != nil {
				return fn
			}
		}
	}
	return nil
}

// readsEnvOfFirstParam says whether the function or method name passes its
// first parameter to os.Getenv.
func (p *goPackage) readsEnvOfFirstParam(name string) bool {
	fn := p.funcDecl(name)
	if fn == nil || len(fn.Type.Params.List) == 0 || len(fn.Type.Params.List[0].Names) == 0 {
		return false
	}
	param := fn.Type.Params.List[0].Names[0].Name
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && isCall(call, "os", "Getenv") && len(call.Args) == 1 {
			if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == param {
				found = true
			}
		}
		return !found
	})
	return found
}

// fieldDoc is the doc comment of field in the struct type lit builds.
func (p *goPackage) fieldDoc(lit *ast.CompositeLit, field string) string {
	typ, ok := lit.Type.(*ast.Ident)
	if !ok {
		return ""
	}
	for _, f := range p.Files {
		for _, d := range f.AST.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || ts.Name.Name != typ.Name {
					continue
				}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						if n.Name == field && fl.Doc != nil {
							return fl.Doc.Text()
						}
					}
				}
			}
		}
	}
	return ""
}

// constDoc is a constant with a string value, and its doc comments.
type constDoc struct {
	Name, Value string
	// Doc is the constant's own comment; GroupDoc that of its const ( )
	// block (or of the lone declaration).
	Doc, GroupDoc string
	File          string
}

// consts are the package's constants of string value, in source order.
func (p *goPackage) consts() []constDoc {
	var out []constDoc
	for _, f := range p.Files {
		for _, d := range f.AST.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			group := gd.Doc.Text()
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				doc := vs.Doc.Text()
				if !gd.Lparen.IsValid() {
					doc, group = group, ""
				}
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if v, ok := stringLit(vs.Values[i]); ok {
						out = append(out, constDoc{Name: n.Name, Value: v, Doc: doc, GroupDoc: group, File: f.Name})
					}
				}
			}
		}
	}
	return out
}

// constValue is the value of the package's string constant name.
func (p *goPackage) constValue(name string) (string, bool) {
	for _, c := range p.consts() {
		if c.Name == name {
			return c.Value, true
		}
	}
	return "", false
}

// dirs are the package directories under dir (relative to root), itself
// included, in order.
func (s *sources) dirs(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(s.root, filepath.FromSlash(dir)), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		gos, _ := filepath.Glob(filepath.Join(p, "*.go"))
		for _, g := range gos {
			if !strings.HasSuffix(g, "_test.go") {
				rel, _ := filepath.Rel(s.root, p)
				out = append(out, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", dir, err)
	}
	return out, nil
}
