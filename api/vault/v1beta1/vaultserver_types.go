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

// DefaultServerAnnotation, set to "true" on one VaultServer, makes it the
// server of every VaultApp that names none (as is-default-class does for
// StorageClasses).
const DefaultServerAnnotation = "vault.exemple.com/is-default-server"

// PredecessorsAnnotation, on a VaultServer, names (comma-separated) the IDs
// of clusters this one replaces in that Vault (their kube-system UIDs, as
// their marks and registrations show them): a cluster rebuilt under the
// same name adopts what they wrote only when the admin says so.
const PredecessorsAnnotation = "vault.exemple.com/predecessors"

// ServerFinalizer holds a VaultServer with deletionPolicy Delete until
// the policies and roles this cluster wrote there are removed.
const ServerFinalizer = "vault.exemple.com/server-cleanup"

// NamespaceVariable stands, in a path template, for the namespace of the
// VaultApp the path is granted to.
const NamespaceVariable = "{namespace}"

// ClusterVariable stands, in a path template or spec.kvPath, for the
// server's spec.cluster: clusters sharing one Vault keep apart by it.
const ClusterVariable = "{cluster}"

// DefaultKVPath is the path each namespace owns in the KV mount when a
// VaultServer names none.
const DefaultKVPath = NamespaceVariable

// VaultServerSpec says where a Vault is, how the operator logs in to it,
// where the VaultApps' roles go, and what each namespace may ask of it.
// Only the cluster admin writes it: tenants can neither read nor change a
// VaultServer.
type VaultServerSpec struct {
	// Address of Vault, for example https://vault.example.com:8200.
	// +kubebuilder:validation:Pattern=`^https?://[^\s]+$`
	// +kubebuilder:validation:MaxLength=512
	Address string `json:"address"`

	// CABundle is a PEM bundle that verifies Vault's certificate.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// CASecretRef is a Secret in the operator's namespace whose key holds
	// the PEM bundle, instead of CABundle.
	// +optional
	CASecretRef *SecretKeySelector `json:"caSecretRef,omitempty"`

	// Namespace is the Vault Enterprise or OpenBao namespace every request
	// goes to (the X-Vault-Namespace header), for example team-platform.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`
	Namespace string `json:"namespace,omitempty"`

	// Cluster is this cluster's name in the mark of every policy written to
	// this Vault. Defaults to the kube-system namespace's UID. Set it once:
	// a mark of another name is another cluster's.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Cluster string `json:"cluster,omitempty"`

	// NamePrefix goes into every policy and role name written to this
	// Vault: app-<prefix>.<namespace>.<name>. Give each cluster that shares
	// the Vault its own.
	// +optional
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	NamePrefix string `json:"namePrefix,omitempty"`

	// Login is how the operator logs in to Vault, with its own
	// ServiceAccount's token.
	Login VaultLogin `json:"login"`

	// KVMount is the KV version 2 mount under which each namespace owns
	// <kvMount>/data/<namespace>/. Defaults to secret.
	// +optional
	// +kubebuilder:default=secret
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`
	KVMount string `json:"kvMount,omitempty"`

	// KVPath is the path each namespace owns in the KV mount, its KV rules
	// relative to it: <kvMount>/data/<kvPath>/<rule path>. {namespace}, a
	// segment of its own, stands for the namespace; {cluster} for
	// spec.cluster, which must then be set. Defaults to {namespace}; give
	// {cluster}/{namespace} when clusters share the KV mount, or a
	// namespace of the same name in each reads the other's secrets.
	// +optional
	// +kubebuilder:default="{namespace}"
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^([A-Za-z0-9_.-]+|\{namespace\}|\{cluster\})(/([A-Za-z0-9_.-]+|\{namespace\}|\{cluster\}))*$`
	// +kubebuilder:validation:XValidation:rule="self.split('/').filter(s, s == '{namespace}').size() == 1",message="must hold {namespace} once, as a segment of its own"
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '.' || s == '..')",message="must not hold a . or .. segment"
	KVPath string `json:"kvPath,omitempty"`

	// AppAuth is the auth mount where the VaultApps' roles are written.
	AppAuth VaultAuthMethod `json:"appAuth"`

	// DeletionPolicy says what becomes of the policies and roles this
	// cluster wrote to this Vault for VaultApps when the VaultServer is
	// deleted. Retain (the default) leaves them, and the VaultApps say
	// ServerNotFound. Delete removes them first: the VaultServer keeps a
	// finalizer until they are gone (a Vault that does not answer holds
	// the deletion; remove the finalizer by hand to give up).
	// +optional
	// +kubebuilder:default=Retain
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Access grants namespaces capabilities on paths of this Vault: the
	// whole of what a VaultApp using this server may have. A KV rule is
	// granted by a template covering its data path
	// (<kvMount>/data/<kvPath>/<path>, for example
	// secret/data/{namespace}/*); namespace annotations count only on the
	// Vault of the operator's environment. Nothing is granted that no entry
	// grants.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Access []VaultAccessGrant `json:"access,omitempty"`
}

// VaultAccessGrant lets some namespaces ask for some capabilities on paths
// of this Vault.
type VaultAccessGrant struct {
	// Namespaces the grant applies to: exact names, prefix patterns
	// ("team-*"), or "*" alone.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Namespaces []string `json:"namespaces"`

	// Paths the namespaces may ask capabilities on.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Paths []VaultPathGrant `json:"paths,omitempty"`

	// AllowRetain lets these namespaces keep their policies after their
	// VaultApp is deleted (deletionPolicy Retain). Some entry that lists
	// the namespace must allow it.
	// +optional
	AllowRetain bool `json:"allowRetain,omitempty"`

	// MaxTokenTTL caps the token TTL their VaultApps may ask for; the
	// largest of the entries that list a namespace applies, and an entry
	// without it allows up to 24h. A cap lowered later shortens the live
	// role's TTL.
	// +optional
	MaxTokenTTL *metav1.Duration `json:"maxTokenTTL,omitempty"`
}

// VaultPathGrant is a path template and the capabilities granted on it.
type VaultPathGrant struct {
	// Template of the path, with {namespace} standing for the VaultApp's
	// namespace and {cluster} for spec.cluster, for example
	// secret/data/{namespace}/*, secret/data/{cluster}/{namespace}/* or
	// database/creds/{namespace}-*. Templates under sys/, auth/ and
	// identity/ are refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Template string `json:"template"`

	// Capabilities granted on the paths the template yields.
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	Capabilities []Capability `json:"capabilities"`
}

// VaultServerStatus is what the operator observed.
type VaultServerStatus struct {
	// Conditions: Ready (the summary), Connected.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Product is the server the operator talks to, as its health answer
	// tells: Vault, Vault Enterprise or OpenBao (empty when it does not
	// tell).
	// +optional
	Product string `json:"product,omitempty"`

	// Version of Vault, as it reports it.
	// +optional
	Version string `json:"version,omitempty"`

	// Cluster is the name this cluster's marks carry in this Vault.
	// +optional
	Cluster string `json:"cluster,omitempty"`

	// AppAuthIssuer is the issuer the JWT app roles bind (bound_claims
	// iss): spec.appAuth.jwt.issuer, or this cluster's.
	// +optional
	AppAuthIssuer string `json:"appAuthIssuer,omitempty"`

	// ContestedPolicies are the policies this cluster holds in the Vault
	// that a VaultApp of another cluster registered there asks for too
	// (the clusters share their names: neither has a name prefix). While a
	// name is contested its role issues tokens that live at most
	// ContestedTokenTTL, renewals included: a token issued before the
	// VaultApp goes would otherwise keep the other cluster's rules, once
	// it takes the name, for as long as it lives.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=500
	ContestedPolicies []string `json:"contestedPolicies,omitempty"`

	// VaultApps is how many VaultApps have written to this server.
	// +optional
	VaultApps int32 `json:"vaultApps,omitempty"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// VaultServer is a Vault the operator writes VaultApps' policies and roles
// to, and the cluster admin's grants for it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName=vsrv,categories=vault
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Product",type=string,JSONPath=`.status.product`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.status.cluster`
// +kubebuilder:printcolumn:name="VaultApps",type=integer,JSONPath=`.status.vaultApps`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VaultServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VaultServerSpec   `json:"spec,omitempty"`
	Status VaultServerStatus `json:"status,omitempty"`
}

// VaultServerList is a list of VaultServers.
// +kubebuilder:object:root=true
type VaultServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VaultServer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VaultServer{}, &VaultServerList{})
}
