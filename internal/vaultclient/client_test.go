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
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Vault's answers to a token it does not know, and to a known token its
// policy refuses (Vault 1.21, as the dev server answers them).
const (
	vaultInvalidToken     = `{"errors":["2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n"]}`
	vaultPermissionDenied = `{"errors":["1 error occurred:\n\t* permission denied\n\n"]}`
)

// A policy that refuses the operator (403 with a valid token) costs a token
// lookup per refused request, never a login; where the policy does not let
// the token look itself up either (a role with token_no_default_policy
// without auth/token/lookup-self), one login in all, until Vault answers a
// lookup again; a token Vault forgot, which Vault says, costs one login and
// no lookup, and the request is retried with the new token.
func TestA403LogsInAgainOnlyWhenTheTokenIsGone(t *testing.T) {
	var logins, lookups atomic.Int32
	var tokenKnown, lookupDenied atomic.Bool
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/auth/kubernetes/login":
			logins.Add(1)
			tokenKnown.Store(true)
			_, _ = io.WriteString(w, `{"auth":{"client_token":"t","lease_duration":3600,"renewable":true}}`)
		case r.URL.Path == "/v1/auth/token/lookup-self":
			lookups.Add(1)
			switch {
			case !tokenKnown.Load():
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, vaultInvalidToken)
				return
			case lookupDenied.Load():
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, vaultPermissionDenied)
				return
			}
			_, _ = io.WriteString(w, `{"data":{"ttl":3600}}`)
		case r.URL.Path == "/v1/sys/health":
			_, _ = io.WriteString(w, `{"initialized":true,"sealed":false,"version":"1.21.0"}`)
		case strings.HasPrefix(r.URL.Path, "/v1/sys/policies/acl/"):
			switch {
			case !tokenKnown.Load():
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, vaultInvalidToken)
				return
			case strings.HasSuffix(r.URL.Path, "/forbidden"):
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, vaultPermissionDenied)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	defer vault.Close()
	c := kubernetesLoginClient(t, vault.URL)
	ctx := context.Background()
	for range 5 {
		if err := c.WritePolicy(ctx, "forbidden", "# x"); err == nil {
			t.Fatal("a refused write reported success")
		}
	}
	if logins.Load() != 1 || lookups.Load() != 5 {
		t.Fatalf("five refused writes cost %d logins and %d lookups, want 1 and 5", logins.Load(), lookups.Load())
	}
	tokenKnown.Store(false) // Vault restarted: the token is gone
	if err := c.WritePolicy(ctx, "app.ns.x", "# x"); err != nil {
		t.Fatalf("a write after Vault forgot the token: %v", err)
	}
	if logins.Load() != 2 || lookups.Load() != 5 {
		t.Fatalf("a forgotten token cost %d logins and %d lookups in all, want 2 and 5", logins.Load(), lookups.Load())
	}
	lookupDenied.Store(true) // the policy lacks auth/token/lookup-self
	for range 5 {
		if err := c.WritePolicy(ctx, "forbidden", "# x"); err == nil {
			t.Fatal("a refused write reported success")
		}
	}
	if logins.Load() != 3 {
		t.Fatalf("refused writes with a token that may not look itself up cost %d logins in all, want 3: one to tell a refused token from a refusing policy, then none", logins.Load())
	}
	// A check of the server is no refused request: a lookup refused
	// without a reason costs no login.
	if _, err := c.Check(ctx); err != nil {
		t.Fatalf("check: %v", err)
	}
	if logins.Load() != 3 {
		t.Fatalf("a check with a token that may not look itself up cost a login (%d in all, want 3)", logins.Load())
	}
	// Once Vault answers a lookup, the next unexplained refusal may cost
	// one login again.
	lookupDenied.Store(false)
	if err := c.WritePolicy(ctx, "forbidden", "# x"); err == nil {
		t.Fatal("a refused write reported success")
	}
	lookupDenied.Store(true)
	if err := c.WritePolicy(ctx, "forbidden", "# x"); err == nil {
		t.Fatal("a refused write reported success")
	}
	if logins.Load() != 4 {
		t.Fatalf("%d logins in all, want 4", logins.Load())
	}
}

// loginClientOf returns a client that logs in through Kubernetes auth to a
// fake Vault: the nth login gets the token "t<n>", every other request goes
// to h.
func loginClientOf(t *testing.T, logins *atomic.Int32, h http.HandlerFunc) *Client {
	t.Helper()
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/auth/kubernetes/login" {
			n := logins.Add(1)
			_, _ = io.WriteString(w, `{"auth":{"client_token":"t`+strconv.Itoa(int(n))+`","lease_duration":3600,"renewable":true}}`)
			return
		}
		h(w, r)
	}))
	t.Cleanup(vault.Close)
	return kubernetesLoginClient(t, vault.URL)
}

// kubernetesLoginClient returns a client of the Vault at address that logs
// in through Kubernetes auth with a ServiceAccount token of its own.
func kubernetesLoginClient(t *testing.T, address string) *Client {
	t.Helper()
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("sa-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := ConfigFromEnv()
	cfg.Address, cfg.Token, cfg.ServiceAccountTokenPath = address, "", tokenPath
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A token Vault refuses whatever it asks without saying why (its identity
// entity deleted), lookup-self included, is replaced by a login at once,
// and the request retried: the operator does not wait for the token's
// renewal (two thirds of its TTL, days) to work again.
func TestATokenRefusedWithoutAReasonIsReplaced(t *testing.T) {
	var logins atomic.Int32
	c := loginClientOf(t, &logins, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vault-Token") == "t1" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, vaultPermissionDenied)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx := context.Background()
	if err := c.WritePolicy(ctx, "app.ns.x", "# x"); err != nil {
		t.Fatalf("a write with a token Vault refuses without a reason: %v", err)
	}
	if logins.Load() != 2 {
		t.Fatalf("%d logins, want 2: the first, and one when its token was refused", logins.Load())
	}
}

// Requests in flight when Vault forgets the token each hear "invalid
// token"; together they cost one login, not one each (a request refused
// with the old token does not throw away the new one).
func TestConcurrentRefusalsOfAForgottenTokenCostOneLogin(t *testing.T) {
	var logins atomic.Int32
	c := loginClientOf(t, &logins, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vault-Token") == "t1" { // Vault restarted after the first login
			time.Sleep(50 * time.Millisecond) // every request is in flight with it
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, vaultInvalidToken)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx := context.Background()
	errs := make(chan error, 10)
	for i := range 10 {
		go func() { errs <- c.WritePolicy(ctx, "app.ns.x"+strconv.Itoa(i), "# x") }()
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatalf("a write after Vault forgot the token: %v", err)
		}
	}
	if logins.Load() != 2 {
		t.Fatalf("10 requests refused with a forgotten token cost %d logins in all, want 2 (the first, then one)", logins.Load())
	}
}

// A name is free when a listing at most NamesMaxAge old holds neither a
// policy nor a role of that name; the operator's own writes count at once;
// a listing Vault refuses answers "not free" (the caller reads instead).
func TestFreeNamesComeFromARecentListing(t *testing.T) {
	var lists atomic.Int32
	var refuseRoles atomic.Bool
	c := rootClientOf(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/sys/policies/acl" && r.URL.Query().Get("list") == "true":
			lists.Add(1)
			_, _ = io.WriteString(w, `{"data":{"keys":["default","app.ns.taken"]}}`)
		case r.URL.Path == "/v1/auth/kubernetes/role" && r.URL.Query().Get("list") == "true":
			if refuseRoles.Load() {
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, `{"errors":["permission denied"]}`)
				return
			}
			_, _ = io.WriteString(w, `{"data":{"keys":["app.ns.role-only"]}}`)
		case r.Method == http.MethodPut || r.Method == http.MethodPost:
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	})
	ctx := context.Background()
	for name, want := range map[string]bool{"app.ns.new": true, "app.ns.taken": false, "app.ns.role-only": false} {
		if got := c.Free(ctx, name); got != want {
			t.Errorf("Free(%s) = %v, want %v", name, got, want)
		}
	}
	if lists.Load() != 1 {
		t.Errorf("three questions within %s took %d listings, want 1", NamesMaxAge, lists.Load())
	}
	if err := c.WritePolicy(ctx, "app.ns.new", "# x"); err != nil {
		t.Fatal(err)
	}
	if c.Free(ctx, "app.ns.new") {
		t.Error("a name the operator just wrote is called free")
	}
	time.Sleep(NamesMaxAge)
	refuseRoles.Store(true)
	if c.Free(ctx, "app.ns.other") {
		t.Error("a refused listing called a name free")
	}
	before := lists.Load()
	for range 5 {
		_ = c.Free(ctx, "app.ns.other")
	}
	if lists.Load() != before {
		t.Errorf("after a refusal, %d more listings were asked for, want none for a while", lists.Load()-before)
	}
}

// A listing is worth its size only when enough questions share it: a
// listing of 2×namesPerRequest names (1,000) costs about three requests, so
// it pays for two questions in half a second, not for one.
func TestFreeListsOnlyWhereAListingPays(t *testing.T) {
	var lists atomic.Int32
	policies := make([]string, 0, 2*namesPerRequest)
	for i := range 2 * namesPerRequest {
		policies = append(policies, `"app.ns`+strconv.Itoa(i)+`"`)
	}
	body := `{"data":{"keys":[` + strings.Join(policies, ",") + `]}}`
	c := rootClientOf(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/sys/policies/acl" && r.URL.Query().Get("list") == "true":
			lists.Add(1)
			_, _ = io.WriteString(w, body)
		case r.URL.Path == "/v1/auth/kubernetes/role" && r.URL.Query().Get("list") == "true":
			_, _ = io.WriteString(w, `{"data":{"keys":[]}}`)
		default:
			http.NotFound(w, r)
		}
	})
	ctx := context.Background()
	// The first question: the size is not known yet, a listing is taken.
	if !c.Free(ctx, "app.ns.new") || lists.Load() != 1 {
		t.Fatalf("the first question: %d listings, want 1 and the name free", lists.Load())
	}
	// One question in a window, alone: it is read.
	time.Sleep(2 * NamesMaxAge)
	if c.Free(ctx, "app.ns.new") {
		t.Error("a lone question at 1,000 names was answered by a listing, want it read")
	}
	if lists.Load() != 1 {
		t.Errorf("a lone question at 1,000 names took a listing (%d in all), want none", lists.Load())
	}
	// A second one in the same window: a burst that pays for a listing.
	if !c.Free(ctx, "app.ns.other") || lists.Load() != 2 {
		t.Errorf("the second question of a window: %d listings, want 2 and the name free", lists.Load())
	}
}

func TestWorthListing(t *testing.T) {
	for _, tc := range []struct {
		size, questions int
		want            bool
	}{
		{0, 1, true}, // the first: the size is not known
		{100, 1, true},
		{namesPerRequest, 1, false}, // a listing as dear as two requests
		{namesPerRequest, 2, true},
		{20000, 20, false},   // a fleet of 10,000: 20,000 names cost 41 reads
		{20000, 21, true},    // bench-scale's burst at 10,000 asks some 50 a window
		{100000, 100, false}, // 50,000 at bench-scale's pace (some 30 a window): reads are cheaper
		{100000, 101, true},
	} {
		if got := worthListing(tc.size, tc.questions); got != tc.want {
			t.Errorf("worthListing(%d names, %d questions) = %t, want %t", tc.size, tc.questions, got, tc.want)
		}
	}
}

// rootClientOf is a Client with a root token of a test Vault that answers
// the token's lookup itself and everything else with h, in JSON.
func rootClientOf(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/auth/token/lookup-self" {
			_, _ = io.WriteString(w, `{"data":{"ttl":0}}`)
			return
		}
		h(w, r)
	}))
	t.Cleanup(vault.Close)
	cfg := ConfigFromEnv()
	cfg.Address, cfg.Token = vault.URL, "root"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// OpenBao answers sys/health only outside namespaces ("operation
// unavailable in namespaces"): a client of a namespace checks the server's
// health from the root, and sends every other request into its namespace.
func TestHealthIsAskedOutsideTheNamespace(t *testing.T) {
	var policyNamespace atomic.Value
	vault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		ns := r.Header.Get("X-Vault-Namespace")
		switch r.URL.Path {
		case "/v1/sys/health":
			if ns != "" {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"errors":["operation unavailable in namespaces"]}`)
				return
			}
			_, _ = io.WriteString(w, `{"initialized":true,"sealed":false,"version":"2.7.2"}`)
		case "/v1/auth/token/lookup-self":
			_, _ = io.WriteString(w, `{"data":{"ttl":0}}`)
		default:
			policyNamespace.Store(ns)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer vault.Close()
	cfg := ConfigFromEnv()
	cfg.Address, cfg.Token, cfg.Namespace = vault.URL, "root", "team-platform"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if info, err := c.Check(ctx); err != nil || info != (ServerInfo{Product: ProductOpenBao, Version: "2.7.2"}) {
		t.Fatalf("check of a server in a namespace: %+v, %v", info, err)
	}
	if err := c.Healthy(ctx); err != nil {
		t.Fatalf("health of a server in a namespace: %v", err)
	}
	if err := c.WritePolicy(ctx, "app.ns.x", "# x"); err != nil {
		t.Fatal(err)
	}
	if got := policyNamespace.Load(); got != "team-platform" {
		t.Fatalf("a policy written with namespace header %q, want team-platform", got)
	}
}
