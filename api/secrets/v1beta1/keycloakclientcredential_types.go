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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeletionPolicy says what happens to the target Secrets when the resource is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete removes the Secrets the operator created.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain leaves them in place.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// CleanupFinalizer keeps a KeycloakClientCredential until the operator has
// removed (or, with Retain, released) the Secrets it wrote. The defaulting
// webhook sets it at creation, so that a new resource costs no second write.
const CleanupFinalizer = "secrets.carbogame.com/cleanup"

// ServerReference names a cluster-scoped KeycloakServer.
type ServerReference struct {
	// Name of the KeycloakServer.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// CredentialSource is the Keycloak client whose secret is copied.
type CredentialSource struct {
	// ServerRef is the KeycloakServer to read from.
	ServerRef ServerReference `json:"serverRef"`

	// Realm of the client.
	// +kubebuilder:validation:MinLength=1
	Realm string `json:"realm"`

	// ClientID is the clientId of the confidential client (not its internal id).
	// +kubebuilder:validation:MinLength=1
	ClientID string `json:"clientId"`
}

// SecretKeys maps each value to the key it is written under in the Secret.
// An empty key leaves that value out; clientSecret defaults to "clientSecret"
// and clientId to "clientId".
type SecretKeys struct {
	// ClientID is the key for the client's clientId.
	// +optional
	ClientID string `json:"clientId,omitempty"`

	// ClientSecret is the key for the client's secret.
	// +optional
	ClientSecret string `json:"clientSecret,omitempty"`

	// IssuerURL is the key for the realm's issuer URL.
	// +optional
	IssuerURL string `json:"issuerURL,omitempty"`

	// TokenURL is the key for the realm's token endpoint.
	// +optional
	TokenURL string `json:"tokenURL,omitempty"`

	// PreviousClientSecret is the key for the previous secret while a
	// rotation keeps it valid (for apps that try both); the key is removed
	// when the previous secret is invalidated. Unset: not written.
	// +optional
	PreviousClientSecret string `json:"previousClientSecret,omitempty"`
}

// TargetSpec describes the Secrets to write.
type TargetSpec struct {
	// SecretName is the name of the Secret written in each namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`

	// Namespaces to write the Secret into. Defaults to the resource's own
	// namespace. Any other namespace must consent with the annotation
	// secrets.carbogame.com/allowed-source-namespaces.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	Namespaces []string `json:"namespaces,omitempty"`

	// Keys maps the values to Secret keys.
	// +optional
	Keys SecretKeys `json:"keys,omitempty"`

	// Type of the Secret. Defaults to Opaque.
	// +optional
	Type corev1.SecretType `json:"type,omitempty"`

	// Labels added to the Secret (for tools such as Reloader).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations added to the Secret.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RotationSpec says when and how the client secret is regenerated in
// Keycloak: on a period, or on request (annotation
// secrets.carbogame.com/rotation-request), always with a grace period
// unless downtime is accepted.
type RotationSpec struct {
	// Interval between two scheduled rotations; at least 1h. Unset: the
	// secret is rotated only on request.
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`

	// GracePeriod is how long the previous secret stays valid after the last
	// target Secret received the new one: long enough for every workload to
	// read its Secret again (a mounted Secret reaches a pod a minute or more
	// later). Needs Keycloak's client secret rotation (see docs/app-teams.md, rotating a client secret);
	// between 1m and 24h. Defaults to 10m.
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`

	// AcceptDowntime lets a rotation go ahead where Keycloak cannot keep the
	// previous secret valid: every workload still holding it fails to log in
	// until it reads the new one. Without it such a rotation is refused
	// (condition RotationReady, reason GraceUnavailable).
	// +optional
	AcceptDowntime bool `json:"acceptDowntime,omitempty"`

	// Consumers are the workloads that read the target Secrets once (an
	// environment variable, a file read at start): once every target holds
	// the new secret, the operator restarts them as kubectl rollout restart
	// does, and keeps the previous secret valid until each runs on the new
	// one (or consumers.rolloutTimeout runs out), however short the grace
	// period.
	// +optional
	Consumers *RotationConsumers `json:"consumers,omitempty"`
}

// RotationConsumers names the workloads a rotation restarts: Deployments,
// StatefulSets and DaemonSets of the target namespaces that accept the
// Secret, whose pod template references it (env, envFrom, a volume or a
// projected volume). A workload that does not reference it is never
// touched; one whose update strategy would leave pods on the previous
// secret (OnDelete, a StatefulSet partition) is not restarted.
type RotationConsumers struct {
	// Workloads by kind and name, looked for in every target namespace.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Workloads []WorkloadReference `json:"workloads,omitempty"`

	// Selector picks workloads by label in every target namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Discover adds every workload of a target namespace whose pod template
	// references the target Secret.
	// +optional
	Discover bool `json:"discover,omitempty"`

	// RolloutTimeout bounds the wait for the consumers' rollouts, counted
	// from when every target held the new secret: past it the previous
	// secret is invalidated all the same, and the consumers not yet rolled
	// out are named in a Warning. Keycloak's own expiry of the previous
	// secret (the realm's rotated-expiration-period) ends the wait too.
	// Between 1m and 24h; defaults to 15m.
	// +optional
	RolloutTimeout *metav1.Duration `json:"rolloutTimeout,omitempty"`
}

// WorkloadReference names a workload of a target namespace.
type WorkloadReference struct {
	// Kind of the workload.
	// +kubebuilder:validation:Enum=Deployment;StatefulSet;DaemonSet
	Kind string `json:"kind"`

	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// KeycloakClientCredentialSpec says which client secret goes into which Secrets.
type KeycloakClientCredentialSpec struct {
	// Source is the Keycloak client.
	Source CredentialSource `json:"source"`

	// Target is the Secrets to write.
	Target TargetSpec `json:"target"`

	// RefreshInterval is how often Keycloak is read again; at least 30s. Defaults to 10m.
	// The first read after the operator starts or first sees the resource is
	// spread up to one more interval later.
	// +optional
	RefreshInterval *metav1.Duration `json:"refreshInterval,omitempty"`

	// DeletionPolicy says whether the Secrets are removed with this resource. Defaults to Delete.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Rotation, when set, regenerates the client secret in Keycloak on a period.
	// +optional
	Rotation *RotationSpec `json:"rotation,omitempty"`
}

// KeycloakClientCredential copies a Keycloak client's secret into Secrets.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=kcc,categories=keycloak
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Client",type=string,JSONPath=`.spec.source.clientId`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.spec.target.secretName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeycloakClientCredential struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeycloakClientCredentialSpec   `json:"spec,omitempty"`
	Status KeycloakClientCredentialStatus `json:"status,omitempty"`
}

// KeycloakClientCredentialList is a list of KeycloakClientCredentials.
// +kubebuilder:object:root=true
type KeycloakClientCredentialList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeycloakClientCredential `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeycloakClientCredential{}, &KeycloakClientCredentialList{})
}
