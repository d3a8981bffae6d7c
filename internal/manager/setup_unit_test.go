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

package manager

import (
	"strings"
	"testing"

	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
)

// The environment's Vault takes writes only while the admin opts in.
func TestEnvIgnoredWithoutTheOptIn(t *testing.T) {
	for _, tt := range []struct {
		address string
		optIn   bool
		ignored bool
	}{{"", false, false}, {"https://vault:8200", true, false}, {"https://vault:8200", false, true}} {
		got := envIgnored(Options{Vault: vaultclient.Config{Address: tt.address}, LegacyVaultEnvironment: tt.optIn})
		if (got != "") != tt.ignored || (tt.ignored && !strings.Contains(got, EnvLegacyVaultEnvironment+"=true")) {
			t.Errorf("address %q, opt-in %v: %q", tt.address, tt.optIn, got)
		}
	}
}
