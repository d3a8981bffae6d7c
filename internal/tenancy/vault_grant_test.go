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

package tenancy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// On a VaultServer, its access entries alone grant: KV rules judged on
// their data path, Retain, the token TTL; the namespace's annotations
// count for nothing there.
func TestDecideVaultGrantOnAVaultServer(t *testing.T) {
	hour := &metav1.Duration{Duration: time.Hour}
	s := vaultServer(
		vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, MaxTokenTTL: hour, Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
			{Template: "secret/data/{namespace}/cache/*", Capabilities: []vaultv1beta1.Capability{"update"}},
		}},
		vaultv1beta1.VaultAccessGrant{Namespaces: []string{"team-*"}, AllowRetain: true, Paths: paths("secret/data/{namespace}/*")},
		vaultv1beta1.VaultAccessGrant{Namespaces: []string{"team-b"}, MaxTokenTTL: &metav1.Duration{Duration: 2 * time.Hour}},
	)
	// Annotations that would grant everything on the environment's Vault.
	generous := map[string]string{AllowedCapabilitiesAnnotation: "create,read,update,patch,delete,list", AllowRetainAnnotation: "true"}
	ask := func(ns, path string, caps ...vaultv1beta1.Capability) *vaultv1beta1.VaultApp {
		return &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
			Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: path, Capabilities: caps}}}}}
	}
	withTTL := func(a *vaultv1beta1.VaultApp, d time.Duration) *vaultv1beta1.VaultApp {
		a.Spec.KubernetesAuth.TokenTTL = &metav1.Duration{Duration: d}
		return a
	}
	for _, tt := range []struct {
		name    string
		app     *vaultv1beta1.VaultApp
		want    string // part of the refusal; "" when all is granted
		granted string // the granted rules and TTL
	}{
		{"KV read under the prefix", ask("shop", "db/*", "read", "list"), "", "[{db/* [read list]}] 1h0m0s"},
		{"KV update only where granted", ask("shop", "cache/x", "read", "update"), "", "[{cache/x [read update]}] 1h0m0s"},
		{"KV update elsewhere narrowed", ask("shop", "db/x", "read", "update"),
			`spec.policy.rules[0].capabilities: Forbidden: update on "db/x" (secret/data/shop/db/x) not granted to namespace "shop" by VaultServer "central"`, "[{db/x [read]}] 1h0m0s"},
		{"annotations grant nothing here", ask("shop", "db/x", "delete"), `delete on "db/x"`, "[] 1h0m0s"},
		{"a namespace the server does not list", ask("other", "db/x", "read"), `VaultServer "central" grants namespace "other" nothing`, "[] 0s"},
		{"TTL over the entry's cap", withTTL(ask("shop", "db/x", "read"), 3*time.Hour),
			`spec.kubernetesAuth.tokenTTL: Forbidden: 3h0m0s is over the 1h0m0s VaultServer "central" allows namespace "shop"`, "[{db/x [read]}] 1h0m0s"},
		{"TTL under the most generous entry", withTTL(ask("team-b", "db/x", "read"), 2*time.Hour), "", "[{db/x [read]}] 2h0m0s"},
		{"TTL without a cap stays under the operator's", withTTL(ask("team-a", "db/x", "read"), 20*time.Hour), "", "[{db/x [read]}] 20h0m0s"},
		{"Retain where no entry allows it", retain(ask("shop", "db/x", "read")), `spec.deletionPolicy: Forbidden: Retain not allowed in namespace "shop" by VaultServer "central"`, "[{db/x [read]}] 1h0m0s"},
		{"Retain where an entry allows it", retain(ask("team-a", "db/x", "read")), "", "[{db/x [read]}] 1h0m0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.app.Namespace, Annotations: generous}}
			g, errs := DecideVaultGrant(tt.app, ns, s)
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tt.want != "" && !strings.Contains(fmt.Sprint(errs), tt.want):
				t.Fatalf("refusal %v\nwant %q", errs, tt.want)
			}
			rules := "[]"
			if len(g.Rules) > 0 {
				rules = fmt.Sprint(g.Rules)
			}
			if got := rules + " " + g.TokenTTL.String(); got != tt.granted {
				t.Fatalf("granted %s, want %s", got, tt.granted)
			}
			if RetainAllowedOn(ns, s) != strings.HasPrefix(tt.app.Namespace, "team-") {
				t.Fatalf("RetainAllowedOn(%s) = %v", tt.app.Namespace, RetainAllowedOn(ns, s))
			}
		})
	}
}

// A server keeping clusters apart in its KV mount judges KV rules on the
// namespace's path under this cluster: a template naming {cluster} grants
// them, one of the namespace alone (another layout's paths) does not.
func TestKVRulesUnderTheClustersPath(t *testing.T) {
	app := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}}}
	for _, tt := range []struct {
		template, want string
	}{
		{"secret/data/{cluster}/{namespace}/*", ""},
		{"secret/data/eu-1/{namespace}/*", ""},
		{"secret/data/{namespace}/*", `read on "db/*" (secret/data/eu-1/shop/db/*) not granted`},
		{"secret/data/eu-2/{namespace}/*", `read on "db/*" (secret/data/eu-1/shop/db/*) not granted`},
	} {
		s := vaultServer(vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths(tt.template)})
		s.Spec.Cluster, s.Spec.KVPath = "eu-1", "{cluster}/{namespace}"
		errs := CheckVaultServerAccess(app, s)
		if tt.want == "" && len(errs) > 0 || tt.want != "" && !strings.Contains(fmt.Sprint(errs), tt.want) {
			t.Errorf("%s: refusal %v, want %q", tt.template, errs, tt.want)
		}
		if got := KVOf(s).Prefix("shop"); got != "eu-1/shop" {
			t.Errorf("the namespace's prefix %q, want eu-1/shop", got)
		}
	}
}

// On the environment's Vault the namespace's annotations grant, as in
// every release before VaultServer.
func TestDecideVaultGrantOnTheEnvironmentsVault(t *testing.T) {
	a := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "update"}}}}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	g, errs := DecideVaultGrant(a, ns, nil)
	if !strings.Contains(fmt.Sprint(errs), "update not allowed in namespace \"shop\"") || fmt.Sprint(g.Rules) != "[{db/* [read]}]" || g.TokenTTL != vaultv1beta1.DefaultTokenTTL {
		t.Fatalf("granted %v %s, refused %v", g.Rules, g.TokenTTL, errs)
	}
	ns.Annotations = map[string]string{AllowedCapabilitiesAnnotation: "read,update"}
	if g, errs := DecideVaultGrant(a, ns, nil); len(errs) > 0 || fmt.Sprint(g.Rules) != "[{db/* [read update]}]" {
		t.Fatalf("granted %v, refused %v", g.Rules, errs)
	}
}
