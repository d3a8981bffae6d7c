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

// Command catalog-release renders the release catalog (make
// catalog-release): release/catalog-template.yaml, opm's basic template,
// plus the release being cut — a channel entry that replaces the channel's
// last one, and its bundle image — through 'opm alpha render-template
// basic', which pulls every bundle image (push them first). The catalog
// references the bundles by image, as OperatorHub and a catalog image serve
// them; catalog/ is the local test catalog, rendered from bundle/ with the
// manifests inlined. It writes the extended template back with --write-template.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

const packageName = "vault-keycloak-operator"

func main() {
	template := flag.String("template", "release/catalog-template.yaml", "the basic template of the released versions")
	version := flag.String("version", "", "the version being released, x.y.z")
	image := flag.String("bundle-image", "", "its bundle image (pushed)")
	out := flag.String("out", "release/catalog", "the catalog directory to write")
	opm := flag.String("opm", "opm", "the opm binary")
	writeTemplate := flag.Bool("write-template", false, "write the template with the release added back to --template")
	flag.Parse()
	if err := run(*template, *version, *image, *out, *opm, *writeTemplate); err != nil {
		fmt.Fprintln(os.Stderr, "catalog-release:", err)
		os.Exit(1)
	}
}

func run(templatePath, version, image, out, opm string, writeTemplate bool) error {
	if version == "" || image == "" {
		return fmt.Errorf("--version and --bundle-image are required")
	}
	data, err := os.ReadFile(templatePath)
	if err != nil {
		return err
	}
	var tmpl struct {
		Schema  string           `json:"schema"`
		Entries []map[string]any `json:"entries"`
	}
	if err := yaml.Unmarshal(data, &tmpl); err != nil {
		return fmt.Errorf("%s: %w", templatePath, err)
	}
	if err := addRelease(tmpl.Entries, packageName+".v"+version); err != nil {
		return fmt.Errorf("%s: %w", templatePath, err)
	}
	tmpl.Entries = append(tmpl.Entries, map[string]any{"schema": "olm.bundle", "image": image})
	extended, err := yaml.Marshal(tmpl)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "catalog-release-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	if err := os.WriteFile(filepath.Join(work, "template.yaml"), extended, 0o600); err != nil {
		return err
	}
	// As registries render them now: the CSV's metadata (olm.csv.metadata),
	// not every manifest inlined.
	render := exec.Command(opm, "alpha", "render-template", "basic", filepath.Join(work, "template.yaml"), "-o", "yaml",
		"--migrate-level", "bundle-object-to-csv-metadata")
	render.Env = append(os.Environ(), policyHome(work)...)
	render.Stderr = os.Stderr
	catalog, err := render.Output()
	if err != nil {
		return fmt.Errorf("opm render-template: %w", err)
	}
	// Validated before it replaces the catalog: a bad one is never left.
	staged := filepath.Join(work, "catalog")
	if err := os.MkdirAll(filepath.Join(staged, packageName), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(staged, packageName, "index.yaml"), catalog, 0o644); err != nil {
		return err
	}
	validate := exec.Command(opm, "validate", staged)
	validate.Stdout, validate.Stderr = os.Stdout, os.Stderr
	if err := validate.Run(); err != nil {
		return fmt.Errorf("opm validate: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(out, packageName), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, packageName, "index.yaml"), catalog, 0o644); err != nil {
		return err
	}
	if writeTemplate {
		if err := os.WriteFile(templatePath, extended, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("catalog-release: wrote %s/%s/index.yaml with %s (%s)\n", out, packageName, version, image)
	return nil
}

// addRelease appends csv to channel stable, replacing its last entry.
func addRelease(entries []map[string]any, csv string) error {
	for _, e := range entries {
		if e["schema"] != "olm.channel" || e["name"] != "stable" {
			continue
		}
		list, _ := e["entries"].([]any)
		entry := map[string]any{"name": csv}
		for _, existing := range list {
			if m, _ := existing.(map[string]any); m["name"] == csv {
				return fmt.Errorf("%s is released already", csv)
			}
		}
		if len(list) > 0 {
			last, _ := list[len(list)-1].(map[string]any)
			entry["replaces"] = last["name"]
		}
		e["entries"] = append(list, entry)
		return nil
	}
	return fmt.Errorf("no channel stable")
}

// policyHome gives opm, which pulls through containers/image, a signature
// policy when the machine has none (no podman or skopeo installed): the
// default those tools install, accept anything, for this run only, with
// the user's registry credentials where they are.
func policyHome(work string) []string {
	home, _ := os.UserHomeDir()
	for _, p := range []string{filepath.Join(home, ".config", "containers", "policy.json"), "/etc/containers/policy.json"} {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	fmt.Fprintln(os.Stderr, "catalog-release: no containers signature policy on this machine; opm pulls with the accept-anything default podman installs, for this run only")
	dir := filepath.Join(work, "home")
	if err := os.MkdirAll(filepath.Join(dir, ".config", "containers"), 0o700); err != nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, ".config", "containers", "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o600); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(home, ".docker")); err == nil {
		_ = os.Symlink(filepath.Join(home, ".docker"), filepath.Join(dir, ".docker"))
	}
	return []string{"HOME=" + dir}
}
