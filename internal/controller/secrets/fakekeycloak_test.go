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

package secrets

import (
	"context"
	"fmt"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// fakeKeycloak is one Keycloak server: client secrets by realm/clientId,
// and a record of every call, so a unit test asserts what was asked.
type fakeKeycloak struct {
	login   string
	secrets map[string]string // "realm/clientId" → secret
	calls   []string
	// down, when set, is what every request gets (Keycloak not answering).
	down error
}

func (f *fakeKeycloak) LoginClientID() string { return f.login }

func (f *fakeKeycloak) ClientSecret(_ context.Context, realm, clientID string) (keycloak.Credential, error) {
	f.calls = append(f.calls, "read "+realm+"/"+clientID)
	if f.down != nil {
		return keycloak.Credential{}, f.down
	}
	s, ok := f.secrets[realm+"/"+clientID]
	switch {
	case !ok:
		return keycloak.Credential{}, fmt.Errorf("client %q: %w", clientID, keycloak.ErrClientNotFound)
	case s == "**********":
		return keycloak.Credential{}, fmt.Errorf("client %q: %w", clientID, keycloak.ErrNoUsableSecret)
	}
	return keycloak.Credential{ClientID: clientID, Secret: s}, nil
}

func (f *fakeKeycloak) RegenerateSecret(_ context.Context, realm, clientID string) error {
	f.calls = append(f.calls, "regenerate "+realm+"/"+clientID)
	if f.down != nil {
		return f.down
	}
	f.secrets[realm+"/"+clientID] += "-rotated"
	return nil
}

func (f *fakeKeycloak) IssuerURL(realm string) string { return "https://sso.test/realms/" + realm }
func (f *fakeKeycloak) TokenURL(realm string) string {
	return "https://sso.test/realms/" + realm + "/protocol/openid-connect/token"
}
func (f *fakeKeycloak) Version(context.Context) (string, error) { return "26.0.0", f.down }
func (f *fakeKeycloak) Reachable(context.Context) error         { return f.down }

// fakeServers hands out the one fake server for every KeycloakServer.
// fakeServers hands out the fake Keycloak, or err (a credentials Secret
// the operator cannot use).
type fakeServers struct {
	kc  *fakeKeycloak
	err error
}

func (f *fakeServers) Server(context.Context, *secretsv1beta1.KeycloakServer) (KeycloakAPI, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.kc, nil
}
func (f *fakeServers) Forget(string) {}
