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

// VaultGrantInput is what a VaultApp's grant is decided on: the VaultApp
// in its defaulted view, its namespace, and its server (nil: the
// operator's environment Vault).
type VaultGrantInput struct {
	App       *vaultv1beta1.VaultApp
	Namespace *corev1.Namespace
	Server    *vaultv1beta1.VaultServer
}

// OnVaultServer is what a VaultServer grants: its spec.access entries that
// list the namespace.
var OnVaultServer = Chain[VaultGrantInput]{
	{Name: "the server lists the namespace", Final: true,
		Refuse: func(in VaultGrantInput) field.ErrorList { return CheckVaultServerGrant(in.App, in.Server) }},
	{Name: "KV rules, Retain and token TTL within the namespace's entries",
		Refuse: func(in VaultGrantInput) field.ErrorList { return CheckVaultServerAccess(in.App, in.Server) }},
	{Name: "Vault paths within a template the namespace is granted",
		Refuse: func(in VaultGrantInput) field.ErrorList { return CheckVaultPaths(in.App, in.Server) }},
}

// OnEnvironmentVault is what the operator's environment Vault grants: the
// namespace's annotations, and no path outside its KV prefix.
var OnEnvironmentVault = Chain[VaultGrantInput]{
	{Name: "capabilities and Retain within the namespace's annotations",
		Refuse: func(in VaultGrantInput) field.ErrorList { return CheckVaultGrants(in.App, in.Namespace) }},
	{Name: "no Vault paths without a VaultServer",
		Refuse: func(in VaultGrantInput) field.ErrorList { return CheckVaultPaths(in.App, nil) }},
}

// DecideVaultGrant is the one rule of what a VaultApp may have, for the
// webhook and the controller alike: the chain of its server (OnVaultServer,
// or OnEnvironmentVault when s is nil). It returns what is granted and each
// refusal, naming the field and the grant.
func DecideVaultGrant(app *vaultv1beta1.VaultApp, ns *corev1.Namespace, s *vaultv1beta1.VaultServer) (VaultGrant, field.ErrorList) {
	in := VaultGrantInput{App: app, Namespace: ns, Server: s}
	if s == nil {
		v := OnEnvironmentVault.Evaluate(in)
		return VaultGrant{Rules: GrantedRules(app, ns), TokenTTL: TokenTTL(app)}, v.Refused
	}
	v := OnVaultServer.Evaluate(in)
	if v.GrantsNothing() {
		return VaultGrant{}, v.Refused
	}
	return VaultGrant{Rules: GrantedKVRules(app, s), Paths: GrantedVaultPaths(app, s), TokenTTL: GrantedTokenTTL(app, s),
		MaxTokenTTL: MaxTokenTTLOf(s, app.Namespace)}, v.Refused
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
