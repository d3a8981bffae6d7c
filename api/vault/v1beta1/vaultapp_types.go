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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Capability is a Vault ACL capability.
// +kubebuilder:validation:Enum=create;read;update;patch;delete;list
type Capability string

// The capabilities a VaultApp may ask for. sudo, deny and root are not
// capabilities an application namespace can ever be granted, so the schema
// does not even admit them.
const (
	CapabilityCreate Capability = "create"
	CapabilityRead   Capability = "read"
	CapabilityUpdate Capability = "update"
	CapabilityPatch  Capability = "patch"
	CapabilityDelete Capability = "delete"
	CapabilityList   Capability = "list"
)

// DeletionPolicy says what happens to external state when its resource is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete removes the external state with the resource.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain leaves the external state in place.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// CleanupFinalizer keeps a VaultApp until the operator has removed (or, with
// Retain, released) its policy and role in Vault. The defaulting webhook
// sets it at creation, so that a new VaultApp costs no second write.
const CleanupFinalizer = "vault.exemple.com/cleanup"

// PolicyRule grants capabilities on a path of the namespace's own KV prefix.
type PolicyRule struct {
	// Path relative to <kv-mount>/data/<namespace>/, for example "db/*".
	// It never escapes the namespace's prefix: no leading "/", no "..".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Path string `json:"path"`

	// Capabilities granted on the path.
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	Capabilities []Capability `json:"capabilities"`
}

// VaultPathRule grants capabilities on a whole Vault path outside the
// namespace's KV prefix, such as database/creds/shop: only where a
// VaultServer's spec.access grants it.
type VaultPathRule struct {
	// Path in Vault, for example database/creds/shop or pki/issue/shop.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Path string `json:"path"`

	// Capabilities asked on the path.
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	Capabilities []Capability `json:"capabilities"`
}

// PolicySpec is the Vault ACL policy the operator writes for the VaultApp.
type PolicySpec struct {
	// Rules of the policy, one path block each.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Rules []PolicyRule `json:"rules"`

	// VaultPaths are paths outside the KV prefix (database, PKI, transit
	// engines…), each within a grant of the VaultServer's spec.access.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	VaultPaths []VaultPathRule `json:"vaultPaths,omitempty"`
}

// KubernetesAuthSpec is the Vault Kubernetes-auth role that binds the
// workload's ServiceAccounts, in the VaultApp's own namespace, to the policy.
type KubernetesAuthSpec struct {
	// ServiceAccounts of this namespace allowed to log in with the role.
	// Defaults to the VaultApp's name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`

	// TokenTTL is the TTL of the Vault tokens issued on login. Defaults to 1h.
	// +optional
	TokenTTL *metav1.Duration `json:"tokenTTL,omitempty"`
}

// ServerReference names a VaultServer.
type ServerReference struct {
	// Name of the VaultServer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// VaultAppSpec declares the Vault access a workload of this namespace needs.
type VaultAppSpec struct {
	// ServerRef names the VaultServer to write to. Defaults to the
	// VaultServer annotated vault.exemple.com/is-default-server=true, or
	// the Vault of the operator's environment when there is none. It
	// cannot change (the webhook refuses it for every API version; no CEL
	// rule, whose presence would add a line to every schema error).
	// +optional
	ServerRef *ServerReference `json:"serverRef,omitempty"`

	// Policy to write into Vault.
	Policy PolicySpec `json:"policy"`

	// KubernetesAuth role to write into Vault.
	// +optional
	KubernetesAuth KubernetesAuthSpec `json:"kubernetesAuth,omitempty"`

	// RefreshInterval is how often Vault is checked for drift. Defaults to 5m.
	// The first check after the operator starts or first sees the VaultApp is
	// spread up to one more interval later.
	// +optional
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`

	// DeletionPolicy says whether the policy and role are removed from Vault
	// when the VaultApp is deleted. Defaults to Delete.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
}

// VaultAppStatus is what the operator observed and did.
type VaultAppStatus struct {
	// Conditions: Ready (the summary of the others), PolicySynced, RoleSynced,
	// AccessGranted.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// PolicyName is the name of the Vault ACL policy owned by this VaultApp.
	// +optional
	PolicyName string `json:"policyName,omitempty"`

	// RoleName is the name of the Kubernetes-auth role owned by this VaultApp.
	// +optional
	RoleName string `json:"roleName,omitempty"`

	// Server is the VaultServer the policy and role were written to; empty
	// for the Vault of the operator's environment.
	// +optional
	Server string `json:"server,omitempty"`

	// Vault is what a workload of this VaultApp needs to log in to Vault and
	// read what it was granted, from the VaultServer (which app teams cannot
	// read); empty for the Vault of the operator's environment.
	// +optional
	Vault *VaultAppAccess `json:"vault,omitempty"`

	// LastSyncTime is when Vault was last found equal to the spec.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// LastRefreshRequest is the last refresh request id (annotation
	// vault.exemple.com/refresh-request) the operator honoured: Vault was
	// read and brought in step for it.
	// +optional
	LastRefreshRequest string `json:"lastRefreshRequest,omitempty"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// VaultAppAccess is where and how a workload logs in to Vault and reads
// its secrets.
type VaultAppAccess struct {
	// Address is Vault's address, as the VaultServer gives it.
	// +optional
	Address string `json:"address,omitempty"`

	// Namespace is the Vault namespace every request names (the
	// X-Vault-Namespace header, or VAULT_NAMESPACE for the vault CLI);
	// empty for none.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// LoginPath is where the workload logs in with its ServiceAccount token
	// and the role: auth/<mount>/login.
	// +optional
	LoginPath string `json:"loginPath,omitempty"`

	// Audience is the audience the workload's ServiceAccount token must
	// carry (a projected token of it, or kubectl create token --audience);
	// empty where any token of the cluster does.
	// +optional
	Audience string `json:"audience,omitempty"`

	// Role is the role to log in with (the same as roleName).
	// +optional
	Role string `json:"role,omitempty"`

	// KVMount is the KV version 2 engine that holds the namespace's secrets.
	// +optional
	KVMount string `json:"kvMount,omitempty"`

	// KVPrefix is the namespace's own prefix in that engine: a rule's path p
	// is read as "vault kv get -mount=<kvMount> <kvPrefix>p", which is the
	// API path <kvMount>/data/<kvPrefix>p.
	// +optional
	KVPrefix string `json:"kvPrefix,omitempty"`
}

// VaultApp declares, in an application namespace, the Vault policy and
// Kubernetes-auth role that the namespace's workload needs.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=vapp,categories=vault
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.status.policyName`
// +kubebuilder:printcolumn:name="Server",type=string,JSONPath=`.status.server`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VaultApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VaultAppSpec   `json:"spec,omitempty"`
	Status VaultAppStatus `json:"status,omitempty"`
}

// VaultAppList is a list of VaultApps.
// +kubebuilder:object:root=true
type VaultAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VaultApp `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VaultApp{}, &VaultAppList{})
}
