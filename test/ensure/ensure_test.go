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

// Package ensure proves that the two commands use what a user already has:
// hack/ensure.sh takes KUBEBUILDER_ASSETS, VKO_VAULT_BIN (or a vault on
// PATH), VKO_BAO_BIN and VKO_KEYCLOAK_HOME when they are of the pinned
// versions, builds
// nothing then, and refuses a wrong version with a message that says what
// to do.
package ensure

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// given are the real components make test hands the tests.
func given(t *testing.T) (assets, vault, bao, keycloak string) {
	t.Helper()
	for _, v := range []string{"KUBEBUILDER_ASSETS", "VKO_VAULT_BIN", "VKO_BAO_BIN", "VKO_KEYCLOAK_HOME"} {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is not set: run the tests with 'make test'", v)
		}
	}
	return os.Getenv("KUBEBUILDER_ASSETS"), os.Getenv("VKO_VAULT_BIN"), os.Getenv("VKO_BAO_BIN"), os.Getenv("VKO_KEYCLOAK_HOME")
}

// ensure runs hack/ensure.sh with env (and an empty cache of its own) and
// returns what it printed, what it logged, and whether it succeeded.
func ensure(t *testing.T, cache string, env []string, what string) (string, string, bool) {
	t.Helper()
	cmd := exec.Command(filepath.Join(harness.RepoRoot(), "hack", "ensure.sh"), what)
	cmd.Env = append([]string{"VKO_CACHE_DIR=" + cache, "HOME=" + os.Getenv("HOME")}, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return strings.TrimSpace(stdout.String()), stderr.String(), err == nil
}

func TestGivenComponentsOfThePinnedVersionAreUsedAndNothingIsBuilt(t *testing.T) {
	assets, vault, bao, keycloak := given(t)
	cache := t.TempDir()
	// No go on PATH: a build would fail, not just take time.
	path := "PATH=/usr/bin:/bin"
	tests := []struct {
		what, env, want, says string
	}{
		{"envtest", "KUBEBUILDER_ASSETS=" + assets, assets, "from KUBEBUILDER_ASSETS="},
		{"vault-bin", "VKO_VAULT_BIN=" + vault, vault, "from VKO_VAULT_BIN="},
		{"vault", "VKO_VAULT_BIN=" + vault, filepath.Dir(vault), "from VKO_VAULT_BIN="},
		{"keycloak", "VKO_KEYCLOAK_HOME=" + keycloak, keycloak, "from VKO_KEYCLOAK_HOME="},
		{"openbao", "VKO_BAO_BIN=" + bao, bao, "from VKO_BAO_BIN="},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			out, log, ok := ensure(t, cache, []string{path, tt.env}, tt.what)
			if !ok || out != tt.want {
				t.Fatalf("ensure %s printed %q (ok=%v), want %q; log:\n%s", tt.what, out, ok, tt.want, log)
			}
			if !strings.Contains(log, "using ") || !strings.Contains(log, tt.says) {
				t.Fatalf("ensure %s does not say which one it uses:\n%s", tt.what, log)
			}
		})
	}

	t.Run("a vault on PATH", func(t *testing.T) {
		onPath := t.TempDir()
		if err := os.Symlink(vault, filepath.Join(onPath, "vault")); err != nil {
			t.Fatal(err)
		}
		out, log, ok := ensure(t, cache, []string{"PATH=" + onPath + ":/usr/bin:/bin"}, "vault-bin")
		if !ok || out != filepath.Join(onPath, "vault") || !strings.Contains(log, "from PATH") {
			t.Fatalf("printed %q (ok=%v); log:\n%s", out, ok, log)
		}
	})

	if entries, _ := os.ReadDir(cache); len(entries) > 0 {
		t.Fatalf("the cache received %d entries: something was built or fetched", len(entries))
	}
}

func TestAWrongVersionIsRefused(t *testing.T) {
	cache := t.TempDir()
	script := func(dir, name, output string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho '"+output+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	assets := t.TempDir()
	script(assets, "kube-apiserver", "Kubernetes v1.30.0")
	script(assets, "kubectl", "Client Version: v1.30.0")
	script(assets, "etcd", "etcd Version: 3.5.0")
	vaultDir := t.TempDir()
	script(vaultDir, "vault", "Vault v1.15.0")
	script(vaultDir, "bao", "OpenBao v2.1.0")
	kc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(kc, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script(filepath.Join(kc, "bin"), "kc.sh", "")
	if err := os.WriteFile(filepath.Join(kc, "version.txt"), []byte("Keycloak - Version 24.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ what, env, says string }{
		{"envtest", "KUBEBUILDER_ASSETS=" + assets, "KUBEBUILDER_ASSETS=" + assets + " holds kube-apiserver v1.30.0, but this project pins kube-apiserver v1.37.2: point KUBEBUILDER_ASSETS at kube-apiserver v1.37.2, or unset it to have it built"},
		{"vault-bin", "VKO_VAULT_BIN=" + filepath.Join(vaultDir, "vault"), "holds vault v1.15.0, but this project pins vault v1.21.0"},
		{"openbao", "VKO_BAO_BIN=" + filepath.Join(vaultDir, "bao"), "holds bao 2.1.0, but this project pins bao 2.7.2"},
		{"keycloak", "VKO_KEYCLOAK_HOME=" + kc, "holds Keycloak 24.0.0, but this project pins Keycloak 26.7.3"},
		{"keycloak", "VKO_KEYCLOAK_HOME=" + t.TempDir(), "has no bin/kc.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			out, log, ok := ensure(t, cache, []string{"PATH=/usr/bin:/bin", tt.env}, tt.what)
			if ok || out != "" || !strings.Contains(log, tt.says) {
				t.Fatalf("ok=%v printed %q; log:\n%s\nwant it to say %q", ok, out, log, tt.says)
			}
		})
	}
}
