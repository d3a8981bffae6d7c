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

// Package keycloakfake is a Keycloak server in memory for the unit tests of
// the controllers.
package keycloakfake

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// Server is one Keycloak server: client secrets by realm/clientId, and a
// record of every call, so a unit test asserts what was asked. It answers
// the calls of the credential controller's KeycloakAPI
// (internal/controller/secrets); its fields are the test's knobs. A secret
// "**********" stands for one Keycloak masks.
type Server struct {
	Login   string
	Secrets map[string]string // "realm/clientId" → secret
	Calls   []string
	// Down, when set, is what every request gets (Keycloak not answering).
	Down error
	// Grace is what RotationGrace answers; with Grace.Offered a
	// regeneration keeps the previous secret in Previous.
	Grace keycloak.Grace
	// GraceErr, when set, is RotationGrace's answer (a policy read refused).
	GraceErr error
	Previous map[string]string // "realm/clientId" → previous secret
	// PreviousExpires is when every previous secret expires.
	PreviousExpires time.Time
	// Created counts the regenerations of each client: its secret's
	// creation record.
	Created map[string]int
	// Regenerated is what RegenerationsSince answers for each realm, once;
	// RegenerationsErr, when set, its error (view-events refused).
	Regenerated      map[string][]string
	RegenerationsErr error
}

// RegenerationsSince answers the realm's Regenerated clientIds, once.
func (f *Server) RegenerationsSince(_ context.Context, realm string, cursor keycloak.EventsCursor) (keycloak.Regenerations, error) {
	f.Calls = append(f.Calls, "admin-events "+realm)
	if f.Down != nil || f.RegenerationsErr != nil {
		return keycloak.Regenerations{Cursor: cursor}, cmp.Or(f.Down, f.RegenerationsErr)
	}
	ids := f.Regenerated[realm]
	delete(f.Regenerated, realm)
	return keycloak.Regenerations{ClientIDs: ids, Cursor: keycloak.EventsCursor{At: cursor.At.Add(time.Second)}}, nil
}

func (f *Server) LoginClientID() string { return f.Login }

func (f *Server) ClientSecret(_ context.Context, realm, clientID string) (keycloak.Credential, error) {
	f.Calls = append(f.Calls, "read "+realm+"/"+clientID)
	if f.Down != nil {
		return keycloak.Credential{}, f.Down
	}
	s, ok := f.Secrets[realm+"/"+clientID]
	switch {
	case !ok:
		return keycloak.Credential{}, fmt.Errorf("client %q: %w", clientID, keycloak.ErrClientNotFound)
	case s == "**********":
		return keycloak.Credential{}, fmt.Errorf("client %q: %w", clientID, keycloak.ErrNoUsableSecret)
	}
	return keycloak.Credential{ClientID: clientID, Secret: s}, nil
}

func (f *Server) RegenerateSecret(_ context.Context, realm, clientID string) error {
	f.Calls = append(f.Calls, "regenerate "+realm+"/"+clientID)
	if f.Down != nil {
		return f.Down
	}
	key := realm + "/" + clientID
	if f.Grace.Offered {
		if f.Previous == nil {
			f.Previous = map[string]string{}
		}
		f.Previous[key] = f.Secrets[key]
	}
	if f.Created == nil {
		f.Created = map[string]int{}
	}
	f.Created[key]++
	f.Secrets[key] += "-rotated"
	return nil
}

func (f *Server) RotationGrace(_ context.Context, realm string) (keycloak.Grace, error) {
	f.Calls = append(f.Calls, "grace "+realm)
	if f.GraceErr != nil {
		return keycloak.Grace{}, f.GraceErr
	}
	return f.Grace, f.Down
}

func (f *Server) SecretState(_ context.Context, realm, clientID string) (keycloak.SecretState, error) {
	f.Calls = append(f.Calls, "state "+realm+"/"+clientID)
	key := realm + "/" + clientID
	st := keycloak.SecretState{Created: fmt.Sprint(f.Created[key])}
	if _, ok := f.Previous[key]; ok {
		st.PreviousExpires = f.PreviousExpires
	}
	return st, f.Down
}

func (f *Server) PreviousSecret(_ context.Context, realm, clientID string) (string, error) {
	f.Calls = append(f.Calls, "previous "+realm+"/"+clientID)
	return f.Previous[realm+"/"+clientID], f.Down
}

func (f *Server) InvalidatePreviousSecret(_ context.Context, realm, clientID string) error {
	f.Calls = append(f.Calls, "invalidate "+realm+"/"+clientID)
	if f.Down != nil {
		return f.Down
	}
	delete(f.Previous, realm+"/"+clientID)
	return nil
}

func (f *Server) IssuerURL(realm string) string { return "https://sso.test/realms/" + realm }
func (f *Server) TokenURL(realm string) string {
	return "https://sso.test/realms/" + realm + "/protocol/openid-connect/token"
}
func (f *Server) Version(context.Context) (string, error) { return "26.0.0", f.Down }
func (f *Server) Reachable(context.Context) error         { return f.Down }
