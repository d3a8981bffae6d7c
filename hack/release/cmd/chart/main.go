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

// Command chart writes the Helm chart generated from config/ (make chart).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/carbogame/vault-keycloak-operator/hack/release/bundle"
	"github.com/carbogame/vault-keycloak-operator/hack/release/chart"
)

func main() {
	var opts chart.Options
	out := flag.String("out", "dist/chart", "the chart directory to write (replaced)")
	flag.StringVar(&opts.ConfigDir, "config", "config", "the repository's config/")
	flag.StringVar(&opts.Version, "version", "", "the chart's and the operator's version, x.y.z")
	flag.Parse()
	if opts.Version == "" {
		fmt.Fprintln(os.Stderr, "chart: --version is required")
		os.Exit(2)
	}
	files, err := chart.Generate(opts)
	if err == nil {
		err = write(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

// write replaces dir with the chart.
func write(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return bundle.WriteFiles(dir, files)
}
