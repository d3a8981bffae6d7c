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

package secrets

import (
	"fmt"
	"strings"
	"testing"

	"github.com/Nerzal/gocloak/v13"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// A Keycloak failure's reason says who acts: a 403 is the admin's (the
// operator's client lacks a role), named with the KeycloakServer whose
// credentials hold that client.
func TestKeycloakFailuresSayWhoActs(t *testing.T) {
	for _, tt := range []struct {
		name, reason, says string
		err                error
	}{
		{"a right the operator's client lacks", secretsv1beta1.ReasonOperatorForbidden, "KeycloakServer prod's credentials lacks a realm-management role",
			fmt.Errorf("read client: %w", &gocloak.APIError{Code: 403, Message: "403 Forbidden"})},
		{"credentials refused", secretsv1beta1.ReasonUnauthorized, "credentials refused",
			fmt.Errorf("log in: %w: %w", keycloak.ErrUnauthorized, &gocloak.APIError{Code: 401})},
		{"any other answer", secretsv1beta1.ReasonKeycloakError, "500",
			fmt.Errorf("read client: %w", &gocloak.APIError{Code: 500, Message: "500 Internal Server Error"})},
	} {
		got := classify(tt.err, "prod")
		if got.reason != tt.reason || !strings.Contains(got.err.Error(), tt.says) {
			t.Errorf("%s: %s %q, want %s saying %q", tt.name, got.reason, got.err, tt.reason, tt.says)
		}
	}
}
