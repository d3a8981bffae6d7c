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
	"context"

	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// VaultAPI is what the VaultApp controller asks of Vault, and nothing else
// (policy text is rendered by vaultclient.RenderPolicy); internal/vaultclient's
// Client is the real one, internal/vaultclient/vaultfake's Vault the unit tests'.
type VaultAPI interface {
	// KV is where the KV engine is mounted and the path each namespace
	// owns in it (policy paths under them).
	KV() vaultclient.KV
	ReadPolicy(ctx context.Context, name string) (string, bool, error)
	WritePolicy(ctx context.Context, name, text string) error
	DeletePolicy(ctx context.Context, name string) error
	ListPolicies(ctx context.Context, prefix string) ([]string, error)
	ReadRole(ctx context.Context, name string) (vaultclient.Role, bool, error)
	WriteRole(ctx context.Context, name string, r vaultclient.Role) error
	DeleteRole(ctx context.Context, name string) error
	// Free reports that neither a policy nor a role of the name exists,
	// by a listing at most vaultclient.NamesMaxAge old; false when unsure.
	Free(ctx context.Context, name string) bool
	// Healthy says whether Vault serves requests (no token needed).
	Healthy(ctx context.Context) error
}

var _ VaultAPI = (*vaultclient.Client)(nil)
