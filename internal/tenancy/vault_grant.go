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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// VaultGrant is what of a VaultApp's spec its server grants: what is
// written to Vault.
type VaultGrant struct {
	// Rules on the namespace's own KV prefix.
	Rules []vaultv1beta1.PolicyRule
	// Paths outside it (a VaultServer's spec.access only).
	Paths []vaultv1beta1.VaultPathRule
	// TokenTTL of the role's tokens.
	TokenTTL time.Duration
	// MaxTokenTTL is the longest a token lives, renewals included: the
	// VaultServer's cap; zero on the environment's Vault (none written).
	MaxTokenTTL time.Duration
}

// DecideVaultGrant is the one rule of what a VaultApp may have, for the
// webhook and the controller alike: on a VaultServer (s), its spec.access
// entries that list the namespace; on the operator's environment Vault (s
// nil), the namespace's annotations. It returns what is granted and each
// refusal, naming the field and the grant.
func DecideVaultGrant(app *vaultv1beta1.VaultApp, ns *corev1.Namespace, s *vaultv1beta1.VaultServer) (VaultGrant, field.ErrorList) {
	if s == nil {
		refused := append(CheckVaultGrants(app, ns), CheckVaultPaths(app, nil)...)
		return VaultGrant{Rules: GrantedRules(app, ns), TokenTTL: TokenTTL(app)}, refused
	}
	if refused := CheckVaultServerGrant(app, s); len(refused) > 0 {
		return VaultGrant{}, refused
	}
	refused := append(CheckVaultServerAccess(app, s), CheckVaultPaths(app, s)...)
	return VaultGrant{Rules: GrantedKVRules(app, s), Paths: GrantedVaultPaths(app, s), TokenTTL: GrantedTokenTTL(app, s),
		MaxTokenTTL: MaxTokenTTLOf(s, app.Namespace)}, refused
}

// RetainAllowedOn reports whether a VaultApp's namespace may keep its
// policy and role after deletion: by its VaultServer's grants, or on the
// environment's Vault (s nil) by its annotation.
func RetainAllowedOn(ns *corev1.Namespace, s *vaultv1beta1.VaultServer) bool {
	if s == nil {
		return RetainAllowed(ns)
	}
	return RetainGranted(s, ns.Name)
}
