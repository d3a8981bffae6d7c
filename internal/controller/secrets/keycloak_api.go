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

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// KeycloakAPI is what the controllers ask of one Keycloak server;
// internal/keycloak's Server is the real one, and unit tests use a fake.
type KeycloakAPI interface {
	LoginClientID() string
	ClientSecret(ctx context.Context, realm, clientID string) (keycloak.Credential, error)
	RegenerateSecret(ctx context.Context, realm, clientID string) error
	// RotationGrace says whether a regeneration keeps the previous secret
	// valid in realm, and for how long.
	RotationGrace(ctx context.Context, realm string) (keycloak.Grace, error)
	// SecretState is what Keycloak records of the client's secrets: when
	// the current one was issued, when the previous one expires.
	SecretState(ctx context.Context, realm, clientID string) (keycloak.SecretState, error)
	// PreviousSecret is the secret a rotation keeps valid, "" when none.
	PreviousSecret(ctx context.Context, realm, clientID string) (string, error)
	// InvalidatePreviousSecret ends the previous secret's validity.
	InvalidatePreviousSecret(ctx context.Context, realm, clientID string) error
	// RegenerationsSince are the realm's clients whose secret Keycloak
	// issued after cursor (its admin events), and the next cursor.
	RegenerationsSince(ctx context.Context, realm string, cursor keycloak.EventsCursor) (keycloak.Regenerations, error)
	IssuerURL(realm string) string
	TokenURL(realm string) string
	Version(ctx context.Context) (string, error)
	// Reachable says whether the server answers (no token needed).
	Reachable(ctx context.Context) error
}

// Clients turns a KeycloakServer into the client of that server.
type Clients interface {
	Client(ctx context.Context, server *secretsv1beta1.KeycloakServer) (KeycloakAPI, error)
	// Forget drops what is kept for a KeycloakServer that was deleted.
	Forget(name string)
}

var (
	_ KeycloakAPI = (*keycloak.Client)(nil)
	_ Clients     = (*ClientSource)(nil)
)
