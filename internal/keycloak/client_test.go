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
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
)

func TestOnlyARealSecretIsUsable(t *testing.T) {
	for value, ok := range map[string]bool{"s3cr3t": true, "": false, "**********": false, "*": false, "a*b": true} {
		err := usable(&gocloak.CredentialRepresentation{Value: gocloak.StringP(value)})
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrNoUsableSecret)) {
			t.Errorf("usable(%q) = %v, want usable %v", value, err, ok)
		}
	}
	if err := usable(nil); !errors.Is(err, ErrNoUsableSecret) {
		t.Errorf("usable(nil) = %v", err)
	}
}

func TestThePoolKeepsOneClientPerConfiguration(t *testing.T) {
	p := NewPool()
	cfg := Config{URL: "https://sso.test", Auth: ClientCredentials, ClientID: "vko", ClientSecret: "x"}
	a, err := p.Client("prod", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := p.Client("prod", cfg); b != a {
		t.Fatal("the same configuration made a new server (and a new login)")
	}
	cfg.ClientSecret = "rotated"
	if c, _ := p.Client("prod", cfg); c == a {
		t.Fatal("changed credentials kept the old server")
	}
	if got := a.LoginClientID(); got != "vko" {
		t.Fatalf("LoginClientID = %q", got)
	}
	if got := (&Client{cfg: Config{Auth: Password, ClientID: "ignored"}}).LoginClientID(); got != "admin-cli" {
		t.Fatalf("password login client = %q", got)
	}
	if got := a.TokenURL("apps"); got != "https://sso.test/realms/apps/protocol/openid-connect/token" {
		t.Fatalf("TokenURL = %q", got)
	}
}

func TestATokenIsRenewedJustBeforeItExpires(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	for lifetime, want := range map[time.Duration]time.Duration{
		time.Minute:      55 * time.Second, // Keycloak's default: one request per lifetime
		10 * time.Second: 9 * time.Second,
		time.Hour:        time.Hour - 5*time.Second,
	} {
		if got := renewAt(now, lifetime).Sub(now); got != want {
			t.Errorf("a %s token is renewed after %s, want %s", lifetime, got, want)
		}
	}
}

// A client's id is looked up once; a remembered id Keycloak no longer knows
// (the client was re-created) is looked up again, once.
func TestClientIdsAreRememberedAndRefreshedWhenGone(t *testing.T) {
	var finds, reads int
	current := "id-1"
	kc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/protocol/openid-connect/token"):
			_, _ = io.WriteString(w, `{"access_token":"t","expires_in":60}`)
		case strings.HasSuffix(r.URL.Path, "/clients"):
			finds++
			_, _ = io.WriteString(w, `[{"id":"`+current+`","clientId":"gitea"}]`)
		case strings.HasSuffix(r.URL.Path, "/client-secret"):
			reads++
			id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path[strings.Index(r.URL.Path, "/clients/"):], "/clients/"), "/client-secret")
			if id != current && (current != "id-3" || id != "id-2") { // id-1 was deleted; id-2 was renamed
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, `{"type":"secret","value":"v-`+id+`"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer kc.Close()
	s, err := newClient("test", Config{URL: kc.URL, Auth: ClientCredentials, ClientID: "vko", ClientSecret: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		if cred, err := s.ClientSecret(ctx, "apps", "gitea"); err != nil || cred.Secret != "v-id-1" {
			t.Fatalf("ClientSecret = %v, %v", cred.Secret == "v-id-1", err)
		}
	}
	if finds != 1 || reads != 3 {
		t.Fatalf("three reads cost %d lookups and %d secret reads, want 1 and 3", finds, reads)
	}
	current = "id-2"
	if cred, err := s.ClientSecret(ctx, "apps", "gitea"); err != nil || cred.Secret != "v-id-2" {
		t.Fatalf("after the client was re-created: %v, %v", cred.Secret == "v-id-2", err)
	}
	if finds != 2 {
		t.Fatalf("a re-created client was looked up %d times in all, want 2", finds)
	}
	// Renamed: the old id still answers, but the clientId now names
	// another client. Once the lookup is clientIDTTL old, the new one is read.
	valid := current
	current = "id-3"
	s.clientIDs.Store("apps\x00gitea", knownID{id: valid, at: time.Now().Add(-clientIDTTL)})
	if cred, err := s.ClientSecret(ctx, "apps", "gitea"); err != nil || cred.Secret != "v-id-3" {
		t.Fatalf("after a rename, the client now named gitea was not read: %v", err)
	}
}
