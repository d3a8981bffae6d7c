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
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"

	vaultapi "github.com/hashicorp/vault/api"
)

// Only Vault not answering is marked: a refusal, throttling, TLS trust or
// DNS (configuration), and errors from elsewhere (the Kubernetes API) are not.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nothing listens", fmt.Errorf("read policy %q: %w", "p", &url.Error{Op: "Get", URL: "http://vault", Err: syscall.ECONNREFUSED}), true},
		{"timed out", &url.Error{Op: "Put", URL: "http://vault", Err: context.DeadlineExceeded}, true},
		{"sealed", &vaultapi.ResponseError{StatusCode: 503}, true},
		{"internal error", &vaultapi.ResponseError{StatusCode: 500}, true},
		{"throttled", &vaultapi.ResponseError{StatusCode: 429}, false},
		{"permission denied", &vaultapi.ResponseError{StatusCode: 403}, false},
		{"bad request", &vaultapi.ResponseError{StatusCode: 400}, false},
		{"unknown certificate authority", &url.Error{Op: "Get", URL: "https://vault", Err: x509.UnknownAuthorityError{}}, false},
		{"no such host", &url.Error{Op: "Get", URL: "https://vault", Err: &net.DNSError{Err: "no such host", Name: "vault", IsNotFound: true}}, false},
		{"the operator's own error", errors.New("policy is not the operator's"), false},
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
	if Unavailable(&url.Error{Op: "Get", URL: "https://kube-apiserver", Err: syscall.ECONNREFUSED}) {
		t.Error("an error that did not come through this client is marked")
	}
}
