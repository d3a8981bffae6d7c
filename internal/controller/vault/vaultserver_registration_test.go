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
	"slices"
	"strings"
	"testing"
	"time"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// What a check writes of the registrations and reports, table-tested: a
// free name taken, one's own kept (rewritten only when it changed), a
// namesake's claimed, claims forgotten once stale; KV paths shared or not.
func TestDecideRegistration(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	kv := vaultclient.KV{Mount: "secret", Path: "{namespace}"}
	want := vaultclient.Registration{Cluster: "eu-1", ID: "uid-a", KV: kv}
	with := func(r vaultclient.Registration, edit func(*vaultclient.Registration)) *vaultclient.Registration {
		edit(&r)
		return &r
	}
	other := func(cluster string, kv vaultclient.KV) vaultclient.Registration {
		return vaultclient.Registration{Cluster: cluster, ID: "uid-" + cluster, KV: kv}
	}
	for _, tt := range []struct {
		name       string
		seen       registrationsSeen
		write      string // the registration written ("" none), rendered
		registered string // Registered's reason
		says       string // part of its message
		kv         string // Isolated's reason
	}{
		{"a free name", registrationsSeen{}, vaultclient.RenderRegistration(want), vaultv1beta1.ReasonRegistered, "cluster eu-1 (id uid-a) is registered", vaultv1beta1.ReasonIsolated},
		{"its own, as it is", registrationsSeen{own: &want}, "", vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonIsolated},
		{"its own, with the KV paths it had", registrationsSeen{own: with(want, func(r *vaultclient.Registration) { r.KV.Mount = "kv" })},
			vaultclient.RenderRegistration(want), vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonIsolated},
		{"its own, claimed by a namesake lately", registrationsSeen{own: with(want, func(r *vaultclient.Registration) {
			r.Claims = map[string]time.Time{"uid-b": now.Add(-time.Minute)}
		})}, "", vaultv1beta1.ReasonClusterNameClash, "another cluster runs under this cluster's name eu-1 in this Vault (id uid-b)", vaultv1beta1.ReasonIsolated},
		{"its own, a claim gone stale", registrationsSeen{own: with(want, func(r *vaultclient.Registration) {
			r.Claims = map[string]time.Time{"uid-b": now.Add(-claimFresh)}
		})}, vaultclient.RenderRegistration(want), vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonIsolated},
		{"a namesake's", registrationsSeen{own: with(want, func(r *vaultclient.Registration) { r.ID = "uid-b" })},
			vaultclient.RenderRegistration(*with(want, func(r *vaultclient.Registration) { r.ID, r.Claims = "uid-b", map[string]time.Time{"uid-a": now} })),
			vaultv1beta1.ReasonClusterNameClash, "registered in this Vault by another cluster (id uid-b; this one is uid-a)", vaultv1beta1.ReasonIsolated},
		{"another cluster at the same KV paths", registrationsSeen{own: &want, others: []vaultclient.Registration{other("eu-2", vaultclient.KV{Mount: "secret/"})}},
			"", vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonKVShared},

		{"another cluster on another mount", registrationsSeen{own: &want, others: []vaultclient.Registration{other("eu-2", vaultclient.KV{Mount: "kv-eu-2"})}},
			"", vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonIsolated},
		// Its namespace eu-2 holds every namespace of the other cluster.
		{"another cluster under its name, beside this one's namespaces", registrationsSeen{own: &want, others: []vaultclient.Registration{other("eu-2", vaultclient.KV{Mount: "secret", Path: "eu-2/{namespace}"})}},
			"", vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonKVShared},
		{"this cluster under a former name", registrationsSeen{own: &want, others: []vaultclient.Registration{{Cluster: "old-name", ID: "uid-a", KV: kv}}},
			"", vaultv1beta1.ReasonRegistered, "", vaultv1beta1.ReasonIsolated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := decideRegistration(want, tt.seen, now)
			written := ""
			if out.write != nil {
				written = vaultclient.RenderRegistration(*out.write)
			}
			if written != tt.write {
				t.Errorf("wrote\n%s\nwant\n%s", written, tt.write)
			}
			if out.registered.reason != tt.registered || !strings.Contains(out.registered.message, tt.says) || out.registered.ok != (tt.registered == vaultv1beta1.ReasonRegistered) {
				t.Errorf("Registered %+v, want %s saying %q", out.registered, tt.registered, tt.says)
			}
			if out.kv == nil || out.kv.reason != tt.kv {
				t.Errorf("Isolated %+v, want %s", out.kv, tt.kv)
			}
		})
	}
	shared := decideRegistration(want, registrationsSeen{others: []vaultclient.Registration{other("eu-2", kv)}}, now)
	if msg := shared.kv.message; !strings.Contains(msg, "cluster eu-2 keeps its namespaces' secrets at paths of KV mount secret that overlap this cluster's (secret/data/<namespace>/)") || !strings.Contains(msg, "{cluster}/{namespace}") {
		t.Errorf("KVShared says %q: want the other cluster, the paths, and what to set", msg)
	}
	// Both clusters apart in KV, but their JWT roles bind one issuer on
	// one mount: a ServiceAccount of one logs in at the other's roles.
	jwtWant := want
	jwtWant.KV.Path, jwtWant.JWTMount, jwtWant.JWTIssuer = "eu-1/{namespace}", "jwt", "https://kubernetes.default.svc.cluster.local"
	twin := other("eu-2", vaultclient.KV{Mount: "secret", Path: "eu-2/{namespace}"})
	twin.JWTMount, twin.JWTIssuer = "jwt", jwtWant.JWTIssuer
	issuer := decideRegistration(jwtWant, registrationsSeen{others: []vaultclient.Registration{twin}}, now)
	if issuer.kv.reason != vaultv1beta1.ReasonIssuerShared || !strings.Contains(issuer.kv.message, "JWT mount jwt") {
		t.Errorf("one issuer on one JWT mount: %+v", issuer.kv)
	}
	twin.JWTIssuer = "https://eu-2.example.com"
	if apart := decideRegistration(jwtWant, registrationsSeen{others: []vaultclient.Registration{twin}}, now); apart.kv.reason != vaultv1beta1.ReasonIsolated {
		t.Errorf("two issuers on one JWT mount: %+v", apart.kv)
	}
}

// Two KV layouts overlap when a namespace's path of one is, or holds, a
// namespace's path of the other.
func TestKVPathsOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"{namespace}", "", true},
		{"{namespace}", "eu-1/{namespace}", true}, // namespace eu-1 holds them
		{"eu-1/{namespace}", "eu-2/{namespace}", false},
		{"apps/{namespace}", "{namespace}", true},
		{"apps/{namespace}", "teams/{namespace}", false},
		{"{namespace}/kv", "{namespace}", true},
	} {
		if got := kvPathsOverlap(vaultclient.KV{Path: tt.a}, vaultclient.KV{Path: tt.b}); got != tt.want {
			t.Errorf("%q and %q overlap: %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// A registration reads back as written, and a policy that is none is not
// taken for one.
func TestRegistrationText(t *testing.T) {
	r := vaultclient.Registration{Cluster: "eu-1", ID: "uid-a", KV: vaultclient.KV{Mount: "secret", Path: "eu-1/{namespace}"},
		Claims: map[string]time.Time{"uid-b": time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}, Wants: map[string]vaultclient.Wanted{"central": {At: time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC), Names: []string{"app.shop.web", "app.shop.api"}}}}
	got, ok := vaultclient.ParseRegistration(vaultclient.RenderRegistration(r))
	if !ok || vaultclient.RenderRegistration(got) != vaultclient.RenderRegistration(r) {
		t.Fatalf("read back %+v, %v; want %+v", got, ok, r)
	}
	if w := got.Wants["central"]; !slices.Equal(w.Names, []string{"app.shop.api", "app.shop.web"}) || !w.At.Equal(r.Wants["central"].At) {
		t.Fatalf("wants read back %v", got.Wants)
	}
	if _, ok := vaultclient.ParseRegistration(`path "secret/*" { capabilities = ["read"] }`); ok {
		t.Fatal("a policy taken for a registration")
	}
}
