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

package vaultclient

import (
	"encoding/json"
	"testing"
)

// The answers are the servers' own (sys/health of Vault 1.21.0 and
// OpenBao 2.7.2 dev servers), cut to what the product is told by.
func TestTheProductIsToldFromTheHealthAnswer(t *testing.T) {
	for _, tt := range []struct {
		name, answer string
		want         ServerInfo
	}{
		{"Vault", `{"initialized":true,"sealed":false,"version":"1.21.0","enterprise":false}`, ServerInfo{ProductVault, "1.21.0"}},
		{"Vault Enterprise", `{"initialized":true,"version":"1.21.0+ent","enterprise":true}`, ServerInfo{ProductVaultEnterprise, "1.21.0+ent"}},
		{"OpenBao", `{"initialized":true,"sealed":false,"version":"2.7.2","cluster_name":"vault-cluster-0d0e4e2a"}`, ServerInfo{ProductOpenBao, "2.7.2"}},
		{"a Vault older than the enterprise field", `{"initialized":true,"version":"1.12.3"}`, ServerInfo{"", "1.12.3"}},
		{"a version that is no number", `{"initialized":true,"version":"dev"}`, ServerInfo{"", "dev"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h health
			if err := json.Unmarshal([]byte(tt.answer), &h); err != nil {
				t.Fatal(err)
			}
			if got := h.info(); got != tt.want {
				t.Errorf("info() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
