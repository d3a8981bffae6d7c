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
	"k8s.io/apimachinery/pkg/types"

	"github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Source is the Keycloak client whose secret is copied.
type Source struct {
	// KeycloakServer is the name of the cluster-scoped KeycloakServer.
	KeycloakServer string `json:"keycloakServer"`
	// Realm of the client.
	Realm string `json:"realm"`
	// ClientID is the clientId of the confidential client.
	ClientID string `json:"clientId"`
}

// Fields maps each value to the key it is written under in the Secret.
type Fields struct {
	// ClientID is the key for the client's clientId.
	// +optional
	ClientID string `json:"clientId,omitempty"`
	// ClientSecret is the key for the client's secret.
	// +optional
	ClientSecret string `json:"clientSecret,omitempty"`
}

// Target describes the Secrets to write.
type Target struct {
	// SecretName is the name of the Secret written in each namespace.
	SecretName string `json:"secretName"`
	// Namespace lists the namespaces to write the Secret into.
	// +optional
	Namespace []string `json:"namespace,omitempty"`
	// RefreshPeriod is how often Keycloak is read again.
	// +optional
	RefreshPeriod *metav1.Duration `json:"refreshPeriod,omitempty"`
	// Fields maps the values to Secret keys.
	// +optional
	Fields Fields `json:"fields,omitempty"`
}

// KeycloakClientCredentialSpec is the v1alpha1 spec, the shape of the seeds.
type KeycloakClientCredentialSpec struct {
	// Source is the Keycloak client.
	Source Source `json:"source"`
	// Target is the Secrets to write.
	Target Target `json:"target"`
}

// TargetStatus is the outcome for one target namespace.
type TargetStatus struct {
	// Namespace of the target Secret.
	Namespace string `json:"namespace"`
	// Synced is true when the Secret holds the current values.
	Synced bool `json:"synced"`
	// Reason is a CamelCase word for the outcome.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says what went wrong, if anything.
	// +optional
	Message string `json:"message,omitempty"`
}

// WrittenSecret is a Secret the operator created for this resource and has not
// removed yet. Only a Secret whose UID is recorded here counts as the
// operator's: a copy carries the same labels and annotations, never the UID.
type WrittenSecret struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace"`

	// Name of the Secret.
	Name string `json:"name"`

	// UID of the Secret the operator created (or adopted, see the README).
	UID types.UID `json:"uid"`
}

// RotationStatus is the last rotation; see v1beta1.
type RotationStatus struct {
	// +kubebuilder:validation:Enum=Regenerating;Distributing;GracePeriod;Completed
	Phase string `json:"phase"`
	// +optional
	Request string `json:"request,omitempty"`
	// +optional
	WithGrace bool `json:"withGrace,omitempty"`
	// +optional
	Server string `json:"server,omitempty"`
	// +optional
	Realm string `json:"realm,omitempty"`
	// +optional
	ClientID string `json:"clientId,omitempty"`
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`
	// +optional
	PreviousSecretCreated string `json:"previousSecretCreated,omitempty"`
	// +optional
	SecretCreated string `json:"secretCreated,omitempty"`
	// +optional
	PreviousExpiresTime *metav1.Time `json:"previousExpiresTime,omitempty"`
	// +optional
	StartedTime *metav1.Time `json:"startedTime,omitempty"`
	// +optional
	RegeneratedTime *metav1.Time `json:"regeneratedTime,omitempty"`
	// +optional
	DistributedTime *metav1.Time `json:"distributedTime,omitempty"`
	// +optional
	GraceEndsTime *metav1.Time `json:"graceEndsTime,omitempty"`
	// +optional
	CompletedTime *metav1.Time `json:"completedTime,omitempty"`
	// +optional
	// +listType=atomic
	Consumers []v1beta1.ConsumerStatus `json:"consumers,omitempty"`
	// +optional
	ConsumersDeadline *metav1.Time `json:"consumersDeadline,omitempty"`
}

// KeycloakClientCredentialStatus is what the operator observed and did.
type KeycloakClientCredentialStatus struct {
	// Conditions: Ready (the summary), SourceAvailable, SecretsSynced.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Targets is the outcome per target namespace.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	Targets []TargetStatus `json:"targets,omitempty"`

	// Secrets are the Secrets the operator wrote for this resource: what it
	// updates, prunes and removes, and nothing else.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	Secrets []WrittenSecret `json:"secrets,omitempty"`
	// LastSyncTime is when every target was last found in step with Keycloak.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// LastRotationTime is when the operator last began a rotation of the
	// client secret.
	// +optional
	LastRotationTime *metav1.Time `json:"lastRotationTime,omitempty"`
	// Rotation is the last rotation; see v1beta1.
	// +optional
	Rotation *RotationStatus `json:"rotation,omitempty"`

	// LastRefreshRequest is the last refresh request id (annotation
	// secrets.carbogame.com/refresh-request) the operator honoured.
	// +optional
	LastRefreshRequest string `json:"lastRefreshRequest,omitempty"`

	// LastRotationRequest is the last rotation request id (annotation
	// secrets.carbogame.com/rotation-request) the operator handled: the
	// rotation happened, or was refused with a Warning Event
	// (RotationRequestRefused) when the namespace may not rotate the client.
	// +optional
	LastRotationRequest string `json:"lastRotationRequest,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// KeycloakClientCredential is the deprecated v1alpha1 form; use v1beta1.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:deprecatedversion:warning="secrets.carbogame.com/v1alpha1 KeycloakClientCredential is deprecated; use secrets.carbogame.com/v1beta1"
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
