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

package krew

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestManifest(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	data, err := Manifest("0.2.0", "https://github.com/carbogame/vault-keycloak-operator/releases/download/v0.2.0",
		[]Platform{{OS: "linux", Arch: "amd64", SHA256: sum}, {OS: "darwin", Arch: "arm64", SHA256: sum}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: vko", "version: v0.2.0", "uri: https://github.com/carbogame/vault-keycloak-operator/releases/download/v0.2.0/kubectl-vko_darwin_arm64.tar.gz", "bin: kubectl-vko", "sha256: " + sum} {
		if !strings.Contains(string(data), want) {
			t.Errorf("manifest lacks %q:\n%s", want, data)
		}
	}
	var back map[string]any
	if err := yaml.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version, sha, want string
	}{
		{"0.2", sum, "spec.version v0.2 must be vX.Y.Z"},
		{"0.2.0", "nothex", "needs a selector, an https uri, a sha256 and bin"},
	} {
		if _, err := Manifest(tc.version, "https://example.com", []Platform{{OS: "linux", Arch: "amd64", SHA256: tc.sha}}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Manifest(%q, %q): %v, want %q", tc.version, tc.sha, err, tc.want)
		}
	}
	if _, err := Manifest("0.2.0", "http://example.com", []Platform{{OS: "linux", Arch: "amd64", SHA256: sum}}); err == nil {
		t.Error("an http uri passed")
	}
}
