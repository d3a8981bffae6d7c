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

// Command release-check prints what keeps the next release from shipping
// (make release-check): the version out of step, a CRD change that breaks
// the last release's objects, what OLM v1 or OperatorHub would refuse, a
// dangling bundle in the upgrade graph. It exits 1 on any.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/carbogame/vault-keycloak-operator/hack/release/releases"
)

func main() {
	root := flag.String("root", ".", "the repository")
	flag.Parse()
	problems, err := releases.Check(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-check:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "release-check:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Println("release-check: the next release can ship")
}
