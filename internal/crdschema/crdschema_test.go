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

package crdschema

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

func validApp() *vaultv1beta1.VaultApp {
	return &vaultv1beta1.VaultApp{Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{
		{Path: "db", Capabilities: []vaultv1beta1.Capability{"read"}}}}}}
}

func validCredential() *secretsv1beta1.KeycloakClientCredential {
	return &secretsv1beta1.KeycloakClientCredential{Spec: secretsv1beta1.KeycloakClientCredentialSpec{
		Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "kc"}, Realm: "apps", ClientID: "web"},
		Target: secretsv1beta1.TargetSpec{SecretName: "web"},
	}}
}

func validServer() *secretsv1beta1.KeycloakServer {
	return &secretsv1beta1.KeycloakServer{Spec: secretsv1beta1.KeycloakServerSpec{
		URL: "https://sso.example.com", CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "creds"},
	}}
}

func TestEveryBoundOfTheV1beta1Schema(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("ns-%d", i)
		}
		return out
	}
	tests := []struct {
		name string
		obj  runtime.Object
		want string // "" when valid
	}{
		{"valid VaultApp", validApp(), ""},
		{"valid KeycloakClientCredential", validCredential(), ""},
		{"valid KeycloakServer", validServer(), ""},
		{"65 rules", func() runtime.Object {
			a := validApp()
			for range 64 {
				a.Spec.Policy.Rules = append(a.Spec.Policy.Rules, a.Spec.Policy.Rules[0])
			}
			return a
		}(), "spec.policy.rules: Too many: 65: must have at most 64 items"},
		{"no rule", func() runtime.Object { a := validApp(); a.Spec.Policy.Rules = nil; return a }(), "spec.policy.rules"},
		{"capability outside the enum", func() runtime.Object {
			a := validApp()
			a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"sudo"}
			return a
		}(), `spec.policy.rules[0].capabilities[0]: Unsupported value: "sudo"`},
		{"path too long", func() runtime.Object {
			a := validApp()
			a.Spec.Policy.Rules[0].Path = strings.Repeat("a", 257)
			return a
		}(),
			"spec.policy.rules[0].path: Too long"},
		{"17 ServiceAccounts", func() runtime.Object { a := validApp(); a.Spec.KubernetesAuth.ServiceAccounts = many(17); return a }(),
			"spec.kubernetesAuth.serviceAccounts: Too many: 17"},
		{"deletionPolicy outside the enum", func() runtime.Object { a := validApp(); a.Spec.DeletionPolicy = "Forever"; return a }(),
			`spec.deletionPolicy: Unsupported value: "Forever"`},
		{"33 target namespaces", func() runtime.Object { k := validCredential(); k.Spec.Target.Namespaces = many(33); return k }(),
			"spec.target.namespaces: Too many: 33"},
		{"secretName too long", func() runtime.Object {
			k := validCredential()
			k.Spec.Target.SecretName = strings.Repeat("a", 254)
			return k
		}(),
			"spec.target.secretName: Too long"},
		{"empty clientId", func() runtime.Object { k := validCredential(); k.Spec.Source.ClientID = ""; return k }(), "spec.source.clientId"},
		{"server URL without scheme", func() runtime.Object { s := validServer(); s.Spec.URL = "sso.example.com"; return s }(), "spec.url"},
		{"grant without realms", func() runtime.Object {
			s := validServer()
			s.Spec.Access = []secretsv1beta1.AccessGrant{{Namespaces: []string{"a"}, ClientIDs: []string{"b"}}}
			return s
		}(), "spec.access[0].realms"},
		{"a capability twice in a set", func() runtime.Object {
			a := validApp()
			a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "read"}
			return a
		}(), `spec.policy.rules[0].capabilities[1]: Duplicate value: "read"`},
		{"a target namespace twice", func() runtime.Object { k := validCredential(); k.Spec.Target.Namespaces = []string{"a", "a"}; return k }(),
			`spec.target.namespaces[1]: Duplicate value: "a"`},
		{"65 grants", func() runtime.Object {
			s := validServer()
			for range 65 {
				s.Spec.Access = append(s.Spec.Access, secretsv1beta1.AccessGrant{Namespaces: []string{"a"}, Realms: []string{"r"}, ClientIDs: []string{"c"}})
			}
			return s
		}(), "spec.access: Too many: 65"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.obj)
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("Validate = %q, want %q", got, tt.want)
			}
		})
	}
}

// The path the check exists for: a v1alpha1 object passes the v1alpha1
// schema, and the conversion annotation restores v1beta1 fields that no
// schema checked.
func TestBoundsSkippedThroughTheConversionAnnotationAreCaught(t *testing.T) {
	hub := validApp()
	for range 99 {
		hub.Spec.Policy.Rules = append(hub.Spec.Policy.Rules, hub.Spec.Policy.Rules[0])
	}
	spoke := &vaultv1alpha1.VaultApp{}
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if spoke.Annotations[vaultv1alpha1.ConversionDataAnnotation] == "" {
		t.Fatal("100 rules did not need the conversion annotation: the test no longer covers the path")
	}
	back := &vaultv1beta1.VaultApp{}
	if err := spoke.ConvertTo(back); err != nil {
		t.Fatal(err)
	}
	if errs := Validate(back); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "must have at most 64 items") {
		t.Fatalf("Validate after the round trip = %v", errs)
	}

	kcc := validCredential()
	kcc.Spec.Target.Namespaces = make([]string, 40)
	for i := range kcc.Spec.Target.Namespaces {
		kcc.Spec.Target.Namespaces[i] = fmt.Sprintf("t%d", i)
	}
	kcc.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{}}
	spokeKcc := &secretsv1alpha1.KeycloakClientCredential{}
	if err := spokeKcc.ConvertFrom(kcc); err != nil {
		t.Fatal(err)
	}
	backKcc := &secretsv1beta1.KeycloakClientCredential{}
	if err := spokeKcc.ConvertTo(backKcc); err != nil {
		t.Fatal(err)
	}
	if errs := Validate(backKcc); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "spec.target.namespaces: Too many") {
		t.Fatalf("Validate after the round trip = %v", errs)
	}
}
