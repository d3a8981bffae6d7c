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
	"testing"

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

func TestThePoolKeepsOneServerPerConfiguration(t *testing.T) {
	p := NewPool()
	cfg := ServerConfig{URL: "https://sso.test", Auth: ClientCredentials, ClientID: "vko", ClientSecret: "x"}
	a, err := p.Server("prod", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := p.Server("prod", cfg); b != a {
		t.Fatal("the same configuration made a new server (and a new login)")
	}
	cfg.ClientSecret = "rotated"
	if c, _ := p.Server("prod", cfg); c == a {
		t.Fatal("changed credentials kept the old server")
	}
	if got := a.LoginClientID(); got != "vko" {
		t.Fatalf("LoginClientID = %q", got)
	}
	if got := (&Server{cfg: ServerConfig{Auth: Password, ClientID: "ignored"}}).LoginClientID(); got != "admin-cli" {
		t.Fatalf("password login client = %q", got)
	}
	if got := a.TokenURL("apps"); got != "https://sso.test/realms/apps/protocol/openid-connect/token" {
		t.Fatalf("TokenURL = %q", got)
	}
}
