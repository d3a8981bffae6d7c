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

package keycloak

import (
	"errors"
	"fmt"
	"testing"

	"github.com/Nerzal/gocloak/v13"
)

// Only Keycloak not answering is marked: a refusal, TLS trust or DNS
// (configuration), and errors from elsewhere (the Kubernetes API) are not.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"transport failure (gocloak gives no status)", fmt.Errorf("read secret: %w", &gocloak.APIError{Code: 0, Message: "could not get token: dial tcp 127.0.0.1:8080: connect: connection refused"}), true},
		{"bad gateway", &gocloak.APIError{Code: 502}, true},
		{"unavailable", &gocloak.APIError{Code: 503}, true},
		{"unknown certificate authority", &gocloak.APIError{Code: 0, Message: "could not get token: tls: failed to verify certificate: x509: certificate signed by unknown authority"}, false},
		{"no such host", &gocloak.APIError{Code: 0, Message: "could not get token: dial tcp: lookup sso.example.com: no such host"}, false},
		{"credentials refused", fmt.Errorf("log in: %w: %w", ErrUnauthorized, &gocloak.APIError{Code: 401}), false},
		{"forbidden", &gocloak.APIError{Code: 403}, false},
		{"client not found", fmt.Errorf("client %q: %w", "x", ErrClientNotFound), false},
		{"masked secret", ErrNoUsableSecret, false},
		{"other", errors.New("boom"), false},
		{"none", nil, false},
	} {
		marked := markUnavailable(tc.err)
		if got := Unavailable(marked); got != tc.want {
			t.Errorf("%s: Unavailable(markUnavailable(%v)) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
		if tc.err != nil && !errors.Is(marked, tc.err) {
			t.Errorf("%s: the mark hides the cause", tc.name)
		}
	}
	if Unavailable(&gocloak.APIError{Code: 503}) {
		t.Error("an error that did not come through this client is marked")
	}
}
