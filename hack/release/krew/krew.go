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

// Package krew writes the krew manifest of the kubectl vko plugin (make
// plugin-dist): one archive per platform, each holding kubectl-vko and the
// LICENSE, and a Plugin manifest (krew.googlecontainertools.github.com
// v1alpha2) pointing at the release's assets with their sha256, which a
// krew index or 'kubectl krew install --manifest' takes.
package krew

import (
	"fmt"
	"regexp"

	"sigs.k8s.io/yaml"
)

// Platform is one archive: its OS and architecture, and its digest.
type Platform struct {
	OS, Arch, SHA256 string
}

// Archive is the platform's archive file name.
func (p Platform) Archive() string { return fmt.Sprintf("kubectl-vko_%s_%s.tar.gz", p.OS, p.Arch) }

// Manifest is the Plugin manifest for version, its archives at
// <downloadBase>/<archive>.
func Manifest(version, downloadBase string, platforms []Platform) ([]byte, error) {
	ps := make([]map[string]any, 0, len(platforms))
	for _, p := range platforms {
		ps = append(ps, map[string]any{
			"selector": map[string]any{"matchLabels": map[string]string{"os": p.OS, "arch": p.Arch}},
			"uri":      downloadBase + "/" + p.Archive(),
			"sha256":   p.SHA256,
			"bin":      "kubectl-vko",
			"files":    []map[string]string{{"from": "kubectl-vko", "to": "."}, {"from": "LICENSE", "to": "."}},
		})
	}
	m := map[string]any{
		"apiVersion": "krew.googlecontainertools.github.com/v1alpha2",
		"kind":       "Plugin",
		"metadata":   map[string]any{"name": "vko"},
		"spec": map[string]any{
			"version":          "v" + version,
			"homepage":         "https://github.com/carbogame/vault-keycloak-operator",
			"shortDescription": "Ask the vault-keycloak-operator why, what is granted, and what a resource would produce",
			"description": "kubectl vko explains VaultApps and KeycloakClientCredentials: why one is or is not Ready\n" +
				"(conditions, Events, the grant that applies or the one missing), what a namespace may ask of\n" +
				"each VaultServer and KeycloakServer, the Vault policy and role or the target Secrets a manifest\n" +
				"would produce, and on-demand refreshes and rotations.\n",
			"platforms": ps,
		},
	}
	if err := Validate(m); err != nil {
		return nil, err
	}
	return yaml.Marshal(m)
}

var (
	semverTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	https     = regexp.MustCompile(`^https://`)
)

// Validate checks what krew's index checks of a manifest: the name, a
// semver version, a short description, and per platform a selector, an
// https uri, a sha256 and the binary.
func Validate(m map[string]any) error {
	spec, _ := m["spec"].(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	switch {
	case m["kind"] != "Plugin" || m["apiVersion"] != "krew.googlecontainertools.github.com/v1alpha2":
		return fmt.Errorf("krew manifest: kind and apiVersion")
	case meta["name"] != "vko":
		return fmt.Errorf("krew manifest: metadata.name must be vko (the command is kubectl-vko)")
	case !semverTag.MatchString(fmt.Sprint(spec["version"])):
		return fmt.Errorf("krew manifest: spec.version %v must be vX.Y.Z", spec["version"])
	case len(fmt.Sprint(spec["shortDescription"])) > 100 || spec["shortDescription"] == "":
		return fmt.Errorf("krew manifest: spec.shortDescription must be 1 to 100 characters")
	}
	platforms, _ := spec["platforms"].([]map[string]any)
	if len(platforms) == 0 {
		return fmt.Errorf("krew manifest: no platform")
	}
	for i, p := range platforms {
		if !https.MatchString(fmt.Sprint(p["uri"])) || !sha256Hex.MatchString(fmt.Sprint(p["sha256"])) || p["bin"] == "" || p["selector"] == nil {
			return fmt.Errorf("krew manifest: spec.platforms[%d] needs a selector, an https uri, a sha256 and bin", i)
		}
	}
	return nil
}
