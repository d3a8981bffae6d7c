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

package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Vault policy the README's quick start and the admin setup tell admins
// to write is the one the tests prove against a real Vault
// (OperatorVaultPolicy): they must not drift.
func TestREADMEHasTheTestedVaultPolicy(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/admin-setup.md"} {
		text, err := os.ReadFile(filepath.Join(RepoRoot(), doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "<<'HCL'"+OperatorVaultPolicy+"HCL\n") {
			t.Errorf("%s's vault policy block differs from harness.OperatorVaultPolicy:\n%s", doc, OperatorVaultPolicy)
		}
	}
}

// The confined policy the admin setup shows for one of several clusters on
// a Vault is the one the multicluster tests prove (OperatorVaultPolicyFor).
func TestAdminSetupHasTheTestedPolicyForSharedVaults(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(RepoRoot(), "docs", "admin-setup.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := OperatorVaultPolicyFor("kubernetes-eu-1", "eu-1")
	if !strings.Contains(string(readme), "<<'HCL'"+want+"HCL\n") {
		t.Fatalf("docs/admin-setup.md's policy for a cluster sharing a Vault differs from harness.OperatorVaultPolicyFor:\n%s", want)
	}
}

// The policy the admin setup shows for a VaultServer on JWT auth is the
// one the JWT test proves (OperatorVaultJWTPolicyFor).
func TestAdminSetupHasTheTestedPolicyForJWTAuth(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(RepoRoot(), "docs", "admin-setup.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := OperatorVaultJWTPolicyFor("jwt-eu-1", "eu-1")
	if !strings.Contains(string(readme), "<<'HCL'"+want+"HCL\n") {
		t.Fatalf("docs/admin-setup.md's policy for JWT auth differs from harness.OperatorVaultJWTPolicyFor:\n%s", want)
	}
}
