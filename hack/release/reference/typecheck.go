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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The types of the packages the Events are read from (go/types): the
// data flow (flow.go) follows a name to its variable, a field to its
// struct, a call to its function, where names alone would mix two
// variables r of one function or the reason fields of two structs.
//
// The packages are checked from the parsed sources; their imports are read
// from the export data the go command builds for them (`go list -export`,
// from the build cache), as golang.org/x/tools/go/packages would, with the
// standard library's importer only: no module added to hack/release.

// typedPackage is a parsed package with its types.
type typedPackage struct {
	*goPackage
	types *types.Package
	info  *types.Info
}

// typeCheck checks the packages in dirs (relative to root).
func (s *sources) typeCheck(dirs []string) ([]*typedPackage, error) {
	exports, err := s.exportData(dirs)
	if err != nil {
		return nil, err
	}
	conf := types.Config{
		// One importer for all, so that an import is read once.
		Importer: importer.ForCompiler(s.fset, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s (go list -export)", path)
			}
			return os.Open(file)
		}),
	}
	out := make([]*typedPackage, 0, len(dirs))
	for _, dir := range dirs {
		p, err := s.pkg(dir)
		if err != nil {
			return nil, err
		}
		files := make([]*ast.File, 0, len(p.Files))
		for _, f := range p.Files {
			files = append(files, f.AST)
		}
		info := &types.Info{
			Types:      map[ast.Expr]types.TypeAndValue{},
			Defs:       map[*ast.Ident]types.Object{},
			Uses:       map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
		}
		tp, err := conf.Check(p.ImportPath, s.fset, files, info)
		if err != nil {
			return nil, fmt.Errorf("type-check %s: %w", dir, err)
		}
		out = append(out, &typedPackage{goPackage: p, types: tp, info: info})
	}
	return out, nil
}

// exportData maps the import path of every dependency of dirs to the file
// holding its export data.
func (s *sources) exportData(dirs []string) (map[string]string, error) {
	args := make([]string, 0, 5+len(dirs))
	args = append(args, "list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}\t{{.Export}}{{end}}")
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = s.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export (the types of %s): %w\n%s", strings.Join(dirs, ", "), err, stderr.String())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok {
			exports[path] = file
		}
	}
	if len(exports) == 0 {
		return nil, errors.New("go list -export: no export data listed")
	}
	return exports, sc.Err()
}
