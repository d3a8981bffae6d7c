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
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak/keycloakfake"
)

var _ KeycloakAPI = (*keycloakfake.Server)(nil)

// fakeClients hands out the fake Keycloak, or err (a credentials Secret
// the operator cannot use).
type fakeClients struct {
	kc  *keycloakfake.Server
	err error
}

func (f *fakeClients) Client(context.Context, *secretsv1beta1.KeycloakServer) (KeycloakAPI, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.kc, nil
}
func (f *fakeClients) Forget(string) {}
