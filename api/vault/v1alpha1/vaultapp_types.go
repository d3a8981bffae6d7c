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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// VaultPolicyPreset is a named set of capabilities.
// +kubebuilder:validation:Enum=read;read-write
type VaultPolicyPreset string

const (
	// PresetRead grants read and list.
	PresetRead VaultPolicyPreset = "read"
	// PresetReadWrite grants create, read, update, patch, delete and list.
	PresetReadWrite VaultPolicyPreset = "read-write"
)

// VaultAppSpec is the flat, preset-based v1alpha1 spec.
type VaultAppSpec struct {
	// VaultPolicy is the preset granted on every secret path. Defaults to read.
	// +optional
	VaultPolicy VaultPolicyPreset `json:"vaultPolicy,omitempty"`

	// ServiceAccount of this namespace that may log in. Defaults to the VaultApp's name.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`

	// SecretPaths are KV paths relative to the namespace's own prefix.
	// +optional
	SecretPaths []string `json:"secretPaths,omitempty"`
}

// VaultAppStatus is what the operator observed and did.
type VaultAppStatus struct {
	// Conditions: Ready (the summary), PolicySynced, RoleSynced.
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
	// read what it was granted; v1beta1's, which v1alpha1 shows as it is.
	// +optional
	Vault *v1beta1.VaultAppAccess `json:"vault,omitempty"`

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

// VaultApp is the deprecated v1alpha1 form of a VaultApp; use v1beta1.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:deprecatedversion:warning="vault.exemple.com/v1alpha1 VaultApp is deprecated; use vault.exemple.com/v1beta1"
// +kubebuilder:resource:shortName=vapp,categories=vault
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=`.status.policyName`
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
