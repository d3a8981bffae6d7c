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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults and bounds of a KeycloakClientCredential's spec. The bounds are
// checked by the validating webhook and again by the controller.
const (
	DefaultRefreshInterval = 10 * time.Minute
	MinRefreshInterval     = 30 * time.Second
	MinRotationInterval    = time.Hour
	DefaultGracePeriod     = 10 * time.Minute
	MinGracePeriod         = time.Minute
	MaxGracePeriod         = 24 * time.Hour
	DefaultRolloutTimeout  = 15 * time.Minute
	MinRolloutTimeout      = time.Minute
	MaxRolloutTimeout      = 24 * time.Hour
	DefaultClientIDKey     = "clientId"
	DefaultClientSecretKey = "clientSecret"
)

// SetDefaults fills in what the spec leaves out. The defaulting webhook
// calls it on admission, and the controller on the object it reads (one
// admitted while the webhook was down, or stored by an earlier release, may
// lack a default): both see the same spec.
func (kcc *KeycloakClientCredential) SetDefaults() {
	spec := &kcc.Spec
	if spec.RefreshInterval == nil {
		spec.RefreshInterval = &metav1.Duration{Duration: DefaultRefreshInterval}
	}
	if spec.DeletionPolicy == "" {
		spec.DeletionPolicy = DeletionPolicyDelete
	}
	if spec.Target.Keys.ClientSecret == "" {
		spec.Target.Keys.ClientSecret = DefaultClientSecretKey
	}
	if spec.Target.Keys.ClientID == "" {
		spec.Target.Keys.ClientID = DefaultClientIDKey
	}
	if spec.Target.Type == "" {
		spec.Target.Type = corev1.SecretTypeOpaque
	}
	if spec.Rotation != nil && spec.Rotation.GracePeriod == nil {
		spec.Rotation.GracePeriod = &metav1.Duration{Duration: DefaultGracePeriod}
	}
}

// RolloutTimeout bounds a rotation's wait for its consumers' rollouts.
func (kcc *KeycloakClientCredential) RolloutTimeout() time.Duration {
	if r := kcc.Spec.Rotation; r != nil && r.Consumers != nil && r.Consumers.RolloutTimeout != nil {
		return r.Consumers.RolloutTimeout.Duration
	}
	return DefaultRolloutTimeout
}

// GracePeriod is how long a rotation keeps the previous secret valid: the
// spec's, or the default for a rotation on request without a spec.
func (kcc *KeycloakClientCredential) GracePeriod() time.Duration {
	if r := kcc.Spec.Rotation; r != nil && r.GracePeriod != nil {
		return r.GracePeriod.Duration
	}
	return DefaultGracePeriod
}

// AcceptsDowntime says whether a rotation may go ahead without a grace period.
func (kcc *KeycloakClientCredential) AcceptsDowntime() bool {
	return kcc.Spec.Rotation != nil && kcc.Spec.Rotation.AcceptDowntime
}
