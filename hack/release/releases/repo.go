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

package releases

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/manifests"
	"sigs.k8s.io/yaml"
)

// Check runs every release check on the repository at root and returns
// the problems found, sorted (none: the next release can ship).
// 'make release-check' prints them; the tests fail on any.
func Check(root string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return nil, fmt.Errorf("read VERSION: %w", err)
	}
	version, err := semver.Parse(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("VERSION: %w", err)
	}
	bundleDir := filepath.Join(root, "bundle")
	next, err := manifests.GetBundleFromDir(bundleDir)
	if err != nil {
		return nil, fmt.Errorf("load bundle/: %w", err)
	}
	released, err := List(filepath.Join(root, "release", "bundles"))
	if err != nil {
		return nil, err
	}
	section, err := FirstSection(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	annotations, err := readAnnotations(bundleDir)
	if err != nil {
		return nil, err
	}
	problems, err := versionProblems(root, version, next, section)
	if err != nil {
		return nil, err
	}
	upgrade, err := upgradeProblems(bundleDir, version, next, released)
	if err != nil {
		return nil, err
	}
	problems = append(problems, upgrade...)
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	olm, err := OLMv1Problems(bundleDir)
	if err != nil {
		return nil, err
	}
	problems = append(problems, olm...)
	problems = append(problems, OperatorHubProblems(next.CSV, annotations, section.Date != "")...)
	graph, err := GraphProblems(filepath.Join(root, "release", "catalog-template.yaml"), released, next.CSV.Name, next.CSV.Spec.Replaces)
	if err != nil {
		return nil, err
	}
	problems = append(problems, graph...)
	labels, err := dockerfileLabels(filepath.Join(root, "bundle.Dockerfile"))
	if err != nil {
		return nil, err
	}
	for k, v := range annotations {
		if labels[k] != v {
			fail("bundle.Dockerfile: LABEL %s=%q, metadata/annotations.yaml says %q", k, labels[k], v)
		}
	}
	sort.Strings(problems)
	return problems, nil
}

// versionProblems: the version moves with the code, every place says VERSION.
func versionProblems(root string, version semver.Version, next *manifests.Bundle, section Section) ([]string, error) {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !next.CSV.Spec.Version.Equals(version) {
		fail("bundle/: CSV spec.version %s, VERSION says %s (run 'make bundle')", next.CSV.Spec.Version, version)
	}
	if section.Version != version.String() {
		fail("CHANGELOG.md: first section is %s, VERSION says %s", section.Version, version)
	}
	tag := "v" + version.String()
	if img := next.CSV.Annotations["containerImage"]; !strings.HasSuffix(img, ":"+tag) {
		fail("bundle/: containerImage %q, want the tag %s", img, tag)
	}
	kustomization, err := os.ReadFile(filepath.Join(root, "config", "manager", "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(kustomization, []byte("newTag: "+tag+"\n")) {
		fail("config/manager/kustomization.yaml: the manager image's newTag must be %s", tag)
	}

	return problems, nil
}

// upgradeProblems: what shipped stays as it shipped, and the next release
// follows the newest one safely.
func upgradeProblems(bundleDir string, version semver.Version, next *manifests.Bundle, released []Release) ([]string, error) {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, r := range released {
		problems = append(problems, digestProblems(r.Dir)...)
		b, err := manifests.GetBundleFromDir(r.Dir)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", r.Dir, err)
		}
		if !b.CSV.Spec.Version.Equals(r.Version) || b.Package != Package {
			fail("%s: holds %s of package %q; the directory must be named by its version, of package %s", r.Dir, b.CSV.Spec.Version, b.Package, Package)
		}
	}
	if len(released) > 0 {
		if last := released[len(released)-1]; last.Version.GT(version) {
			fail("VERSION %s: older than the released %s", version, last.Version)
		}
	}
	replaces := ""
	if prev, ok := Previous(released, version); ok {
		replaces = CSVName(prev.Version)
		old, err := manifests.GetBundleFromDir(prev.Dir)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", prev.Dir, err)
		}
		crd, err := CRDUpgradeProblems(old.V1CRDs, next.V1CRDs)
		if err != nil {
			return nil, err
		}
		for _, p := range crd {
			fail("upgrade from %s: %s", prev.Version, p)
		}
	}
	if next.CSV.Spec.Replaces != replaces {
		fail("bundle/: CSV spec.replaces %q, want %q (the newest release before %s)", next.CSV.Spec.Replaces, replaces, version)
	}
	for _, r := range released {
		if r.Version.Equals(version) {
			problems = append(problems, sameFiles(bundleDir, r.Dir)...)
		}
	}

	return problems, nil
}

// digestProblems: a released bundle is the one that shipped, file for
// file, as the digests written when it was cut (<dir>.sha256, sha256sum's
// format, paths relative to dir) say.
func digestProblems(dir string) []string {
	sums, err := os.ReadFile(dir + ".sha256")
	if err != nil {
		return []string{fmt.Sprintf("%s.sha256: %v (make release-freeze writes it)", dir, err)}
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, path, ok := strings.Cut(line, "  ")
		if !ok {
			return []string{fmt.Sprintf("%s.sha256: %q is no sha256sum line", dir, line)}
		}
		want[strings.TrimPrefix(path, "./")] = sum
	}
	var problems []string
	seen := map[string]bool{}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		seen[rel] = true
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want[rel] {
			problems = append(problems, fmt.Sprintf("%s/%s: not the file released (its digest differs from %s.sha256); a release is never edited", dir, rel, dir))
		}
		return nil
	})
	for rel := range want {
		if !seen[rel] {
			problems = append(problems, fmt.Sprintf("%s/%s: released, and gone", dir, rel))
		}
	}
	return problems
}

// sameFiles: a released version's frozen bundle and bundle/ are the same
// files (the commit that cuts a release, until VERSION moves on).
func sameFiles(a, b string) []string {
	var problems []string
	for _, sub := range []string{"manifests", "metadata"} {
		entries, _ := os.ReadDir(filepath.Join(a, sub))
		others, _ := os.ReadDir(filepath.Join(b, sub))
		if len(entries) != len(others) {
			problems = append(problems, fmt.Sprintf("%s/%s and %s/%s differ in their files", a, sub, b, sub))
			continue
		}
		for _, e := range entries {
			x, _ := os.ReadFile(filepath.Join(a, sub, e.Name()))
			y, err := os.ReadFile(filepath.Join(b, sub, e.Name()))
			if err != nil || !bytes.Equal(x, y) {
				problems = append(problems, fmt.Sprintf("%s/%s/%s: the released version differs from bundle/ (a release is never regenerated)", b, sub, e.Name()))
			}
		}
	}
	return problems
}

// dockerfileLabels reads the LABEL lines of bundle.Dockerfile.
func dockerfileLabels(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = trimComment(line)
		if rest, ok := strings.CutPrefix(line, "LABEL "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				var s string
				if yaml.Unmarshal([]byte(v), &s) != nil {
					s = v
				}
				labels[k] = s
			}
		}
	}
	return labels, nil
}
