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

// Package releases knows what has shipped and checks that the next release
// can follow it. release/bundles/<version>/ holds each released bundle as it
// shipped (frozen: never regenerated); bundle/ is the next release, at the
// version in VERSION. The checks are the ones OLM v1, OperatorHub and a
// cluster admin upgrading would otherwise find too late: a CRD change that
// breaks stored objects, a bundle OLM v1 cannot install, an upgrade graph
// with a dangling bundle, a version that does not move with the code.
package releases

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/blang/semver/v4"
)

// Package is the OLM package every release belongs to.
const Package = "vault-keycloak-operator"

// Release is one shipped version and the directory of its bundle.
type Release struct {
	Version semver.Version
	Dir     string
}

// CSVName is the ClusterServiceVersion's name of a version of the package.
func CSVName(v semver.Version) string { return Package + ".v" + v.String() }

// List reads the released versions under dir (release/bundles), oldest
// first. Every entry must be a version: a stray directory is an error, not
// a release skipped.
func List(dir string) ([]Release, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read released bundles: %w", err)
	}
	var out []Release
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		v, err := semver.Parse(e.Name())
		if err != nil {
			return nil, fmt.Errorf("released bundle %q: the directory must be named by its version x.y.z: %w", filepath.Join(dir, e.Name()), err)
		}
		out = append(out, Release{Version: v, Dir: filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(out, func(a, b Release) int { return a.Version.Compare(b.Version) })
	return out, nil
}

// Previous is the newest release older than v: what v's bundle replaces.
func Previous(released []Release, v semver.Version) (Release, bool) {
	for i := len(released) - 1; i >= 0; i-- {
		if released[i].Version.LT(v) {
			return released[i], true
		}
	}
	return Release{}, false
}
