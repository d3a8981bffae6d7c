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
	"k8s.io/apimachinery/pkg/types"
)

// RotationStatus is the last rotation: its phase and when each step
// happened.
type RotationStatus struct {
	// Phase is Regenerating (about to ask Keycloak for a new secret),
	// Distributing (the new secret is being written to every target; the
	// previous one stays valid), GracePeriod (every target holds the new
	// secret; the previous one stays valid until graceEndsTime) or
	// Completed (the previous secret was invalidated).
	// +kubebuilder:validation:Enum=Regenerating;Distributing;GracePeriod;Completed
	Phase string `json:"phase"`

	// Request is the rotation request id that started it; empty for a
	// scheduled rotation.
	// +optional
	Request string `json:"request,omitempty"`

	// WithGrace is true when Keycloak keeps the previous secret valid; false
	// for a rotation that accepted downtime.
	// +optional
	WithGrace bool `json:"withGrace,omitempty"`

	// Server, Realm and ClientID name the client being rotated: the rotation
	// goes on only while the spec names the same client (and the grants
	// still allow rotating it); otherwise it is abandoned.
	// +optional
	Server string `json:"server,omitempty"`
	// +optional
	Realm string `json:"realm,omitempty"`
	// +optional
	ClientID string `json:"clientId,omitempty"`

	// GracePeriod is spec.rotation.gracePeriod as the rotation began.
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`

	// PreviousSecretCreated is Keycloak's creation time (Unix seconds) of the
	// secret being replaced. After a restart in Regenerating, a client whose
	// secret was created at another time was regenerated already: it is not
	// regenerated twice.
	// +optional
	PreviousSecretCreated string `json:"previousSecretCreated,omitempty"`

	// SecretCreated is Keycloak's creation time (Unix seconds) of the new
	// secret: a different one before the previous secret is invalidated
	// says someone regenerated it since, and their previous secret is left
	// alone.
	// +optional
	SecretCreated string `json:"secretCreated,omitempty"`

	// PreviousExpiresTime is when Keycloak itself stops accepting the
	// previous secret (its rotated-expiration-period); the grace period
	// never ends later.
	// +optional
	PreviousExpiresTime *metav1.Time `json:"previousExpiresTime,omitempty"`

	// StartedTime is when the rotation began.
	// +optional
	StartedTime *metav1.Time `json:"startedTime,omitempty"`

	// RegeneratedTime is when Keycloak issued the new secret.
	// +optional
	RegeneratedTime *metav1.Time `json:"regeneratedTime,omitempty"`

	// DistributedTime is when the last target Secret received the new secret.
	// +optional
	DistributedTime *metav1.Time `json:"distributedTime,omitempty"`

	// GraceEndsTime is when the previous secret is invalidated.
	// +optional
	GraceEndsTime *metav1.Time `json:"graceEndsTime,omitempty"`

	// CompletedTime is when the previous secret was invalidated.
	// +optional
	CompletedTime *metav1.Time `json:"completedTime,omitempty"`

	// Consumers are the workloads this rotation restarted, and how each
	// rollout stands; the previous secret is invalidated once every one
	// rolled out (or the rollout timeout ran out).
	// +optional
	// +listType=atomic
	Consumers []ConsumerStatus `json:"consumers,omitempty"`

	// ConsumersDeadline is when the wait for the consumers' rollouts ends.
	// +optional
	ConsumersDeadline *metav1.Time `json:"consumersDeadline,omitempty"`
}

// ConsumerStatus is one workload a rotation restarted.
type ConsumerStatus struct {
	// Kind, Namespace and Name of the workload.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`

	// State is RollingOut, RolledOut, TimedOut (the rollout timeout ran
	// out first), Gone (the workload was deleted), Dropped (no longer
	// followed: its namespace stopped accepting the Secret, or its pods
	// stopped reading it) or Restarted (restarted, not waited for: the
	// rotation kept no previous secret, or the secret changed by hand).
	// +kubebuilder:validation:Enum=RollingOut;RolledOut;TimedOut;Gone;Dropped;Restarted
	State string `json:"state"`

	// Message says how the rollout stands, as kubectl rollout status does.
	// +optional
	Message string `json:"message,omitempty"`

	// RestartedTime is when the operator restarted the workload.
	// +optional
	RestartedTime *metav1.Time `json:"restartedTime,omitempty"`

	// FinishedTime is when its rollout was seen finished.
	// +optional
	FinishedTime *metav1.Time `json:"finishedTime,omitempty"`
}

// The states of a consumer's rollout.
const (
	ConsumerRollingOut = "RollingOut"
	ConsumerRolledOut  = "RolledOut"
	ConsumerTimedOut   = "TimedOut"
	ConsumerGone       = "Gone"
	ConsumerDropped    = "Dropped"
	ConsumerRestarted  = "Restarted"
)

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

// KeycloakClientCredentialStatus is what the operator observed and did.
type KeycloakClientCredentialStatus struct {
	// Conditions: Ready (the summary), SourceAvailable, SecretsSynced, and
	// RotationReady when the secret is rotated.
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
	// client secret (the schedule counts from it).
	// +optional
	LastRotationTime *metav1.Time `json:"lastRotationTime,omitempty"`

	// Rotation is the last rotation: its phase and when each step happened.
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
