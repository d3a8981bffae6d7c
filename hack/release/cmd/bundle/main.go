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

// Command bundle writes the OLM bundle generated from config/ (make bundle).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/carbogame/vault-keycloak-operator/hack/release/bundle"
)

func main() {
	var opts bundle.Options
	out := flag.String("out", "bundle", "the bundle directory to write")
	flag.StringVar(&opts.ManifestsDir, "manifests", "config/manifests", "the kustomization the bundle is generated from")
	flag.StringVar(&opts.Version, "version", "", "the operator version, x.y.z")
	flag.StringVar(&opts.Image, "image", "", "the manager image")
	flag.StringVar(&opts.Replaces, "replaces", "", "the CSV this version replaces")
	flag.StringVar(&opts.Package, "package", "vault-keycloak-operator", "the OLM package")
	flag.StringVar(&opts.Channels, "channels", "stable", "the bundle's channels")
	flag.StringVar(&opts.DefaultChannel, "default-channel", "stable", "the default channel")
	retire := flag.String("retire-versions", "", "comma-separated API versions this release no longer serves (e.g. v1alpha1; see README, Upgrading)")
	flag.Parse()
	if *retire != "" {
		opts.RetireVersions = strings.Split(*retire, ",")
	}
	if opts.Version == "" || opts.Image == "" {
		fmt.Fprintln(os.Stderr, "bundle: --version and --image are required")
		os.Exit(2)
	}
	b, err := bundle.Generate(opts)
	if err == nil {
		err = b.Write(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}
