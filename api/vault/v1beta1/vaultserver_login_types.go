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

package v1beta1

// How the operator logs in to a VaultServer's Vault, and the auth mounts its
// app roles use.

// SecretKeySelector names a key of a Secret in the operator's namespace.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key in the Secret. Defaults to ca.crt.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// VaultLogin is how the operator logs in: one method.
// +kubebuilder:validation:XValidation:rule="has(self.kubernetes) != has(self.jwt)",message="set exactly one of kubernetes and jwt"
type VaultLogin struct {
	// Kubernetes logs in through a Kubernetes auth mount with the
	// operator's ServiceAccount token (Vault asks this cluster's API
	// server to review it).
	// +optional
	Kubernetes *VaultRoleLogin `json:"kubernetes,omitempty"`

	// JWT logs in through a JWT auth mount with a token of the operator's
	// ServiceAccount requested for the audience: for a Vault that cannot
	// reach this cluster's API server (it checks the token's signature
	// with the cluster's public keys).
	// +optional
	JWT *VaultJWTLogin `json:"jwt,omitempty"`
}

// VaultRoleLogin is an auth mount and the role to log in with there.
type VaultRoleLogin struct {
	// Mount of the auth method, for example kubernetes-eu-1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`
	Mount string `json:"mount"`

	// Role to log in with.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.@-]+$`
	Role string `json:"role"`
}

// VaultJWTLogin is a JWT auth mount, the role, and the audience of the
// token the operator requests for its ServiceAccount.
type VaultJWTLogin struct {
	VaultRoleLogin `json:",inline"`

	// Audience of the token (the role's bound_audiences), for example
	// vault.example.com.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Audience string `json:"audience"`
}

// VaultAuthMethod is where the VaultApps' roles are written: one method.
// +kubebuilder:validation:XValidation:rule="has(self.kubernetes) != has(self.jwt)",message="set exactly one of kubernetes and jwt"
type VaultAuthMethod struct {
	// Kubernetes writes Kubernetes-auth roles bound to the VaultApp's
	// ServiceAccounts and to the audience of their tokens.
	// +optional
	Kubernetes *VaultKubernetesAuthMount `json:"kubernetes,omitempty"`

	// JWT writes JWT-auth roles bound to the subjects of the VaultApp's
	// ServiceAccounts (system:serviceaccount:<namespace>:<name>) and to
	// the audience: workloads log in with a projected ServiceAccount token
	// of that audience.
	// +optional
	JWT *VaultJWTAuthMount `json:"jwt,omitempty"`
}

// VaultAuthMount names an auth mount.
type VaultAuthMount struct {
	// Mount of the auth method, for example kubernetes-eu-1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`
	Mount string `json:"mount"`
}

// VaultKubernetesAuthMount is a Kubernetes auth mount and the audience its
// roles bind.
type VaultKubernetesAuthMount struct {
	VaultAuthMount `json:",inline"`

	// Audience the workloads' tokens must carry (the roles' audience): a
	// token minted for another service (another audience) does not log
	// in. Defaults to the audience of this cluster's own ServiceAccount
	// tokens (a pod's mounted token, kubectl create token), as the
	// operator's token says; name your own (vault) and give workloads a
	// projected token of it.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^\S+$`
	Audience string `json:"audience,omitempty"`
}

// VaultJWTAuthMount is a JWT auth mount and the audience its roles bind.
type VaultJWTAuthMount struct {
	VaultAuthMount `json:",inline"`

	// Audience the workloads' tokens carry (the roles' bound_audiences).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Audience string `json:"audience"`

	// Issuer the workloads' tokens carry (the roles' bound_claims iss):
	// a mount trusted by several clusters then keeps each cluster's
	// workloads to their own roles, though a subject such as
	// system:serviceaccount:shop:api is the same in every cluster.
	// Defaults to the issuer of this cluster's ServiceAccount tokens, as
	// the operator's own token says (status.appAuthIssuer).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^\S+$`
	Issuer string `json:"issuer,omitempty"`
}
