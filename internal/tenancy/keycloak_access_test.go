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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func TestCheckKeycloakAccess(t *testing.T) {
	server := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "prod"},
		Spec: secretsv1beta1.KeycloakServerSpec{
			Realm: "master",
			Access: []secretsv1beta1.AccessGrant{
				{Namespaces: []string{"team-a"}, Realms: []string{"apps"}, ClientIDs: []string{"team-a-*"}},
				{Namespaces: []string{"team-a"}, Realms: []string{"apps"}, ClientIDs: []string{"team-a-rotating"}, Rotate: true},
				{Namespaces: []string{"ops-*"}, Realms: []string{"*"}, ClientIDs: []string{"*"}},
			},
		},
	}
	login := Login{Realm: "master", ClientID: "vko-operator"}
	tests := []struct {
		name string
		req  KeycloakRequest
		// want is "" when granted, else a part of the refusal: field and rule.
		want string
	}{
		{"exact namespace, realm, prefix client", KeycloakRequest{Namespace: "team-a", Realm: "apps", ClientID: "team-a-web"}, ""},
		{"rotation granted by its own entry", KeycloakRequest{Namespace: "team-a", Realm: "apps", ClientID: "team-a-rotating", Rotate: true}, ""},
		{"namespace pattern and wildcards", KeycloakRequest{Namespace: "ops-east", Realm: "billing", ClientID: "anything"}, ""},
		{"namespace without a grant", KeycloakRequest{Namespace: "team-b", Realm: "apps", ClientID: "team-a-web"},
			`spec.source.serverRef.name: Forbidden: KeycloakServer "prod" does not exist or grants namespace "team-b" nothing`},
		{"realm not granted", KeycloakRequest{Namespace: "team-a", Realm: "master", ClientID: "team-a-web"},
			`spec.source.realm: Forbidden: realm "master" is not granted to namespace "team-a" by KeycloakServer "prod": its grants for this namespace allow realms apps`},
		{"another team's client", KeycloakRequest{Namespace: "team-a", Realm: "apps", ClientID: "team-b-web"},
			`spec.source.clientId: Forbidden: client "team-b-web" in realm "apps" is not granted to namespace "team-a" by KeycloakServer "prod": its grants allow clientIds team-a-*, team-a-rotating`},
		{"rotation without the rotate grant", KeycloakRequest{Namespace: "team-a", Realm: "apps", ClientID: "team-a-web", Rotate: true},
			`spec.rotation: Forbidden: rotating client "team-a-web" is not granted to namespace "team-a"`},
		{"the operator's own login client, even under a wildcard", KeycloakRequest{Namespace: "ops-east", Realm: "master", ClientID: "vko-operator"},
			`spec.source.clientId: Forbidden: client "vko-operator" in realm "master" is the operator's own login client`},
		{"admin-cli in any realm", KeycloakRequest{Namespace: "ops-east", Realm: "billing", ClientID: "admin-cli"}, "is one of Keycloak's admin clients"},
		{"a namespace without a grant guessing the login client hears nothing of it", KeycloakRequest{Namespace: "team-b", Realm: "master", ClientID: "vko-operator"},
			`spec.source.serverRef.name: Forbidden: KeycloakServer "prod" does not exist or grants namespace "team-b" nothing`},
		{"a granted realm, the login client's id guessed: not granted, nothing about the login", KeycloakRequest{Namespace: "team-a", Realm: "master", ClientID: "vko-operator"},
			`spec.source.realm: Forbidden: realm "master" is not granted`},
		{"realm-management", KeycloakRequest{Namespace: "ops-east", Realm: "billing", ClientID: "realm-management"}, "is one of Keycloak's admin clients"},
		{"a realm's admin client in master", KeycloakRequest{Namespace: "ops-east", Realm: "master", ClientID: "billing-realm"}, "is an admin client of the master realm"},
		{"a -realm client outside master is an ordinary client", KeycloakRequest{Namespace: "ops-east", Realm: "billing", ClientID: "x-realm"}, ""},
		{"realm that is a path", KeycloakRequest{Namespace: "ops-east", Realm: "apps/../master", ClientID: "x"}, "spec.source.realm: Invalid value"},
		{"the login client under another case of the realm", KeycloakRequest{Namespace: "ops-east", Realm: "MASTER", ClientID: "vko-operator"}, "is the operator's own login client"},
		{"a realm's admin client under another case of master", KeycloakRequest{Namespace: "ops-east", Realm: "Master", ClientID: "billing-realm"}, "is an admin client"},
		{"realm with dots only", KeycloakRequest{Namespace: "ops-east", Realm: "..", ClientID: "x"}, "must be a plain realm name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := CheckKeycloakAccess(server, tt.req, login)
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs.ToAggregate())
			case tt.want != "" && len(errs) == 0:
				t.Fatalf("granted, want a refusal with %q", tt.want)
			case tt.want != "" && !strings.Contains(errs.ToAggregate().Error(), tt.want):
				t.Fatalf("refusal %q\ndoes not say %q", errs.ToAggregate(), tt.want)
			}
		})
	}
}

func TestLegacyNamespaceGrantsNeedTheAdminsOptIn(t *testing.T) {
	server := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "old"},
		Spec:       secretsv1beta1.KeycloakServerSpec{AllowedNamespaces: []string{"team-a"}},
	}
	req := KeycloakRequest{Namespace: "team-a", Realm: "apps", ClientID: "web"}
	if errs := CheckKeycloakAccess(server, req, LoginOf(server, "")); len(errs) == 0 {
		t.Fatal("allowedNamespaces alone granted access")
	}
	server.Annotations = map[string]string{LegacyNamespaceGrantsAnnotation: "true"}
	if errs := CheckKeycloakAccess(server, req, LoginOf(server, "")); len(errs) > 0 {
		t.Fatalf("legacy grant refused: %v", errs.ToAggregate())
	}
	req.Rotate = true
	if errs := CheckKeycloakAccess(server, req, LoginOf(server, "")); len(errs) == 0 || errs[0].Field != "spec.rotation" {
		t.Fatalf("legacy grant allowed rotation: %v", errs)
	}
	req.Rotate, req.ClientID = false, "admin-cli"
	if errs := CheckKeycloakAccess(server, req, LoginOf(server, "")); len(errs) == 0 {
		t.Fatal("legacy grant reached admin-cli")
	}
}

func TestPasswordLoginProtectsAdminCLI(t *testing.T) {
	server := &secretsv1beta1.KeycloakServer{Spec: secretsv1beta1.KeycloakServerSpec{AuthType: secretsv1beta1.AuthPassword}}
	if got := LoginOf(server, "ignored"); got != (Login{Realm: "master", ClientID: "admin-cli"}) {
		t.Fatalf("LoginOf = %+v", got)
	}
}

func TestValidatePattern(t *testing.T) {
	for p, ok := range map[string]bool{"team-a": true, "team-*": true, "*": true, "": false, "*-a": false, "a*b*": false} {
		if got := len(ValidatePattern(nil, p)) == 0; got != ok {
			t.Errorf("ValidatePattern(%q) ok = %v, want %v", p, got, ok)
		}
	}
}

func TestBroadGrantWarnings(t *testing.T) {
	server := &secretsv1beta1.KeycloakServer{Spec: secretsv1beta1.KeycloakServerSpec{Access: []secretsv1beta1.AccessGrant{
		{Namespaces: []string{"a"}, Realms: []string{"apps"}, ClientIDs: []string{"*"}},
		{Namespaces: []string{"a"}, Realms: []string{"*"}, ClientIDs: []string{"web"}},
		{Namespaces: []string{"a"}, Realms: []string{"mas*"}, ClientIDs: []string{"*"}},
	}}}
	got := BroadGrantWarnings(server)
	if len(got) != 1 || !strings.HasPrefix(got[0], "spec.access[2] grant(s) every client of the master or login realm") {
		t.Fatalf("warnings = %v", got)
	}
}
