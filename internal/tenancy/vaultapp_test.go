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
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

func namespace(annotations map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Annotations: annotations}}
}

func app(policy vaultv1beta1.DeletionPolicy, rules ...vaultv1beta1.PolicyRule) *vaultv1beta1.VaultApp {
	return &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
		Spec:       vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: rules}, DeletionPolicy: policy},
	}
}

func rule(path string, caps ...vaultv1beta1.Capability) vaultv1beta1.PolicyRule {
	return vaultv1beta1.PolicyRule{Path: path, Capabilities: caps}
}

func TestGrantedRulesFollowTheNamespace(t *testing.T) {
	asked := app("", rule("db/*", "read", "update", "list"), rule("stripe", "create", "update"))
	tests := []struct {
		name        string
		annotations map[string]string
		want        []vaultv1beta1.PolicyRule
	}{
		{"default grant: read and list", nil, []vaultv1beta1.PolicyRule{rule("db/*", "read", "list")}},
		{"wide grant keeps all", map[string]string{AllowedCapabilitiesAnnotation: "create,read,update,list"}, asked.Spec.Policy.Rules},
		{"grant taken back to nothing", map[string]string{AllowedCapabilitiesAnnotation: ""}, nil},
		{"sudo is never grantable", map[string]string{AllowedCapabilitiesAnnotation: "sudo,create"}, []vaultv1beta1.PolicyRule{rule("stripe", "create")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GrantedRules(asked, namespace(tt.annotations)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("GrantedRules = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckVaultGrants(t *testing.T) {
	tests := []struct {
		name        string
		app         *vaultv1beta1.VaultApp
		annotations map[string]string
		want        string
	}{
		{"within the default grant", app("", rule("db", "read")), nil, ""},
		{"capability not granted", app("", rule("db", "read", "delete")), nil,
			`spec.policy.rules[0].capabilities: Forbidden: delete not allowed in namespace "shop": it may use read, list (the cluster admin sets this in the namespace's vault.exemple.com/allowed-capabilities annotation)`},
		{"Retain without the admin's annotation", app(vaultv1beta1.DeletionPolicyRetain, rule("db", "read")), nil,
			`spec.deletionPolicy: Forbidden: Retain not allowed in namespace "shop": the cluster admin allows it with the namespace annotation vault.exemple.com/allow-retain=true`},
		{"Retain with it", app(vaultv1beta1.DeletionPolicyRetain, rule("db", "read")), map[string]string{AllowRetainAnnotation: "true"}, ""},
		{"Retain with another value", app(vaultv1beta1.DeletionPolicyRetain, rule("db", "read")), map[string]string{AllowRetainAnnotation: "yes"}, "Retain not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := CheckVaultGrants(tt.app, namespace(tt.annotations))
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("CheckVaultGrants = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidateVaultAppPaths(t *testing.T) {
	tests := map[string]string{
		"db/*":     "",
		"a/+/b":    "",
		"/etc":     `no leading "/"`,
		"a/../b":   `no "." or ".." segment`,
		"a*/b":     `may use "*" only as its last character`,
		"a b":      "may hold only letters",
		"a//b":     "may hold only letters",
		"./secret": `no "." or ".." segment`,
	}
	for path, want := range tests {
		errs := ValidateVaultApp(app("", rule(path, "read")))
		got := ""
		if len(errs) > 0 {
			got = errs.ToAggregate().Error()
		}
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("path %q: %q, want %q", path, got, want)
		}
	}
}

func TestPolicyNames(t *testing.T) {
	if got := PolicyName("", "shop", "api.v2"); got != "app.shop.api.v2" {
		t.Errorf("PolicyName without prefix = %q", got)
	}
	if got := PolicyName("eu1", "shop", "api.v2"); got != "app-eu1.shop.api.v2" {
		t.Errorf("PolicyName with prefix = %q", got)
	}
	for _, tt := range []struct {
		policy string
		want   bool
	}{
		{"app.shop.api", true},
		{"app-eu1.shop.api", true},
		{"app-a-b.shop.api", true},
		// An unprefixed cluster's namespace eu1 with a VaultApp shop.api:
		// not a name of shop/api in any cluster.
		{"app.eu1.shop.api", false},
		{"app.shop.api2", false},
		{"app.xshop.api", false},
		{"app-.shop.api", false},
		{"app-a.b.shop.api", false},
		{"app-EU.shop.api", false},
		{"app-" + strings.Repeat("a", MaxNamePrefix+1) + ".shop.api", false},
		{"shop.api", false},
		{"xapp.shop.api", false},
	} {
		if got := IsPolicyNameOf(tt.policy, "shop", "api"); got != tt.want {
			t.Errorf("IsPolicyNameOf(%q, shop, api) = %v, want %v", tt.policy, got, tt.want)
		}
	}
}
