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

package vault

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"testing"

	vaultapi "github.com/hashicorp/vault/api"
)

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nothing listens", fmt.Errorf("read policy %q: %w", "p", &url.Error{Op: "Get", URL: "http://vault", Err: syscall.ECONNREFUSED}), true},
		{"timed out", &url.Error{Op: "Put", URL: "http://vault", Err: context.DeadlineExceeded}, true},
		{"sealed", &vaultapi.ResponseError{StatusCode: 503}, true},
		{"overloaded", &vaultapi.ResponseError{StatusCode: 429}, true},
		{"internal error", &vaultapi.ResponseError{StatusCode: 500}, true},
		{"permission denied", &vaultapi.ResponseError{StatusCode: 403}, false},
		{"bad request", &vaultapi.ResponseError{StatusCode: 400}, false},
		{"the operator's own error", errors.New("policy is not the operator's"), false},
		{"none", nil, false},
	} {
		if got := Unavailable(tc.err); got != tc.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
