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
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A JWT role reads back equal to what was written, and anything the
// operator would not write reads as drift.
// roundTrip is what Vault answers: the written data, through JSON,
// token_policies (written as one comma-separated string) read back as its
// list.
func roundTrip(data map[string]any) map[string]any {
	raw, _ := json.Marshal(data)
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	_ = d.Decode(&out)
	if s, ok := out["token_policies"].(string); ok {
		var list []any
		for _, p := range strings.Split(s, ",") {
			list = append(list, p)
		}
		out["token_policies"] = list
	}
	return out
}

func TestJWTRoleReadsBackAsWritten(t *testing.T) {
	c := &Client{cfg: Config{AppRoleAudience: "vault.example.com"}}
	want := Role{ServiceAccounts: []string{"api", "worker"}, Namespace: "shop", Policies: []string{"app.shop.api"}, TTL: time.Hour}
	if p, ok := c.jwtRoleData(want)["token_policies"].(string); !ok || p != "app.shop.api" {
		t.Fatalf("token_policies written as %#v, want the one policy as a string (OpenBao refuses a list against the admin's glob)", c.jwtRoleData(want)["token_policies"])
	}
	written := roundTrip(c.jwtRoleData(want))
	if got := c.jwtRoleOf(written); !got.Equal(want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	for _, tt := range []struct {
		name   string
		mutate func(map[string]any)
	}{
		{"another audience", func(d map[string]any) { d["bound_audiences"] = []any{"other"} }},
		{"a second audience", func(d map[string]any) { d["bound_audiences"] = []any{"vault.example.com", "other"} }},
		{"an OIDC role", func(d map[string]any) { d["role_type"] = "oidc" }},
		{"another user claim", func(d map[string]any) { d["user_claim"] = "email" }},
		{"glob claims", func(d map[string]any) { d["bound_claims_type"] = "glob" }},
		{"a subject of another namespace", func(d map[string]any) {
			d["bound_claims"] = map[string]any{"sub": []any{"system:serviceaccount:shop:api", "system:serviceaccount:bank:worker"}}
		}},
		{"a subject that is no ServiceAccount", func(d map[string]any) {
			d["bound_claims"] = map[string]any{"sub": []any{"system:serviceaccount:shop:api", "alice"}}
		}},
		{"another claim bound", func(d map[string]any) {
			d["bound_claims"] = map[string]any{"sub": []any{"system:serviceaccount:shop:api", "system:serviceaccount:shop:worker"}, "groups": "x"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := roundTrip(c.jwtRoleData(want))
			tt.mutate(d)
			if got := c.jwtRoleOf(d); got.Equal(want) {
				t.Fatalf("drift not seen: %+v", got)
			}
		})
	}
}

// A JWT role of a server with an issuer binds it beside the subjects, and
// an issuer taken away, changed or widened by hand is drift.
func TestJWTRoleBindsTheIssuer(t *testing.T) {
	const issuer = "https://cluster-a.example.com"
	c := &Client{cfg: Config{AppRoleAudience: "vault.example.com", AppRoleIssuer: issuer}}
	want := Role{ServiceAccounts: []string{"api"}, Namespace: "shop", Policies: []string{"app.shop.api"}, TTL: time.Hour}
	written := c.jwtRoleData(want)
	if got := written["bound_claims"].(map[string]any)["iss"]; got != issuer {
		t.Fatalf("bound_claims iss %v, want %s", got, issuer)
	}
	if got := c.jwtRoleOf(roundTrip(written)); !got.Equal(want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	// Vault may answer the issuer as a list of one.
	asList := roundTrip(written)
	asList["bound_claims"].(map[string]any)["iss"] = []any{issuer}
	if got := c.jwtRoleOf(asList); !got.Equal(want) {
		t.Fatalf("an issuer read back as a list of one: %+v, want %+v", got, want)
	}
	for _, tt := range []struct {
		name string
		iss  any
	}{
		{"no issuer", nil},
		{"another issuer", "https://cluster-b.example.com"},
		{"a second issuer", []any{issuer, "https://cluster-b.example.com"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := roundTrip(written)
			claims := d["bound_claims"].(map[string]any)
			if tt.iss == nil {
				delete(claims, "iss")
			} else {
				claims["iss"] = tt.iss
			}
			if got := c.jwtRoleOf(d); got.Equal(want) {
				t.Fatalf("drift not seen: %+v", got)
			}
		})
	}
	// A server without an issuer reads a role that binds one as drift too:
	// the setting was taken away.
	unbound := &Client{cfg: Config{AppRoleAudience: "vault.example.com"}}
	if got := unbound.jwtRoleOf(roundTrip(written)); got.Equal(want) {
		t.Fatalf("an issuer no longer configured is not seen: %+v", got)
	}
}

// A Kubernetes-auth role of a server with an audience reads back equal only
// with that audience; another, or none, is drift.
func TestKubernetesRoleBindsTheAudience(t *testing.T) {
	c := &Client{cfg: Config{AppRoleKubernetesAudience: "vault"}}
	want := Role{ServiceAccounts: []string{"api"}, Namespace: "shop", Policies: []string{"app.shop.api"}, TTL: time.Hour}
	data := func(audience any) map[string]any {
		d := map[string]any{"bound_service_account_names": []any{"api"}, "bound_service_account_namespaces": []any{"shop"},
			"token_policies": []any{"app.shop.api"}, "token_ttl": json.Number("3600")}
		if audience != nil {
			d["audience"] = audience
		}
		return d
	}
	if got := c.kubernetesRoleOf(data("vault")); !got.Equal(want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	for _, audience := range []any{nil, "", "https://kubernetes.default.svc"} {
		got := c.kubernetesRoleOf(data(audience))
		if got.Equal(want) {
			t.Errorf("audience %v not seen as drift", audience)
		}
		// Drift, not another shape: the role stays the operator's to
		// repair and to remove (its namespace and policies as written).
		if got.Namespace != "shop" || !strings.Contains(got.Drift, "spec.appAuth.kubernetes.audience") {
			t.Errorf("audience %v read as %+v; want the namespace kept and the drift named", audience, got)
		}
	}
	if got := (&Client{}).kubernetesRoleOf(data("anything")); !got.Equal(want) {
		t.Errorf("a server without an audience reads %+v as drift", got)
	}
}
