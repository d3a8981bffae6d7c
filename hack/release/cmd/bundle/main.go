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

	"github.com/blang/semver/v4"

	"github.com/carbogame/vault-keycloak-operator/hack/release/bundle"
	"github.com/carbogame/vault-keycloak-operator/hack/release/releases"
)

func main() {
	var opts bundle.Options
	out := flag.String("out", "bundle", "the bundle directory to write")
	flag.StringVar(&opts.ManifestsDir, "manifests", "config/manifests", "the kustomization the bundle is generated from")
	flag.StringVar(&opts.Version, "version", "", "the operator version, x.y.z")
	flag.StringVar(&opts.Image, "image", "", "the manager image")
	flag.StringVar(&opts.Replaces, "replaces", "", "the CSV this version replaces (default: the newest release under --released older than --version)")
	flag.StringVar(&opts.CreatedAt, "created-at", "", "the release date, YYYY-MM-DD (default: the date of --version's section in --changelog)")
	changelog := flag.String("changelog", "", "CHANGELOG.md, whose first section dates the release")
	released := flag.String("released", "", "the directory of the released bundles (release/bundles)")
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
	if opts.Replaces == "" && *released != "" {
		replaces, err := previousCSV(*released, opts.Version)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bundle:", err)
			os.Exit(1)
		}
		opts.Replaces = replaces
	}
	if opts.CreatedAt == "" && *changelog != "" {
		section, err := releases.FirstSection(*changelog)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bundle:", err)
			os.Exit(1)
		}
		if section.Version == opts.Version {
			opts.CreatedAt = section.Date
		}
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

// previousCSV names the release version replaces: the newest one older.
func previousCSV(releasedDir, version string) (string, error) {
	v, err := semver.Parse(version)
	if err != nil {
		return "", fmt.Errorf("--version %q: %w", version, err)
	}
	released, err := releases.List(releasedDir)
	if err != nil {
		return "", err
	}
	if prev, ok := releases.Previous(released, v); ok {
		return releases.CSVName(prev.Version), nil
	}
	return "", nil
}
