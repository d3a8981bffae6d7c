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

// Command reference writes docs/reference.md from the code (make reference).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/carbogame/vault-keycloak-operator/hack/release/reference"
)

func main() {
	out := flag.String("out", "docs/reference.md", "the page to write")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(1)
	}
}

func run(root, out string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("the repository's root: %w", err)
	}
	help, cleanup, err := reference.BuildManager(root)
	if err != nil {
		return err
	}
	defer cleanup()
	page, err := reference.Generate(reference.Options{Root: root, Help: help})
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, page, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
