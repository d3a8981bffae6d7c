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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults and bounds of a VaultApp's spec. The bounds are checked by the
// validating webhook and again by the controller.
const (
	DefaultRefreshInterval = 5 * time.Minute
	MinRefreshInterval     = 30 * time.Second
	DefaultTokenTTL        = time.Hour
	MinTokenTTL            = time.Minute
	MaxTokenTTL            = 24 * time.Hour
	// ContestedTokenTTL is the longest a token of a contested policy's
	// role lives, renewals included (VaultServerStatus.ContestedPolicies).
	ContestedTokenTTL = 5 * time.Minute
)

// SetDefaults fills in what the spec leaves out. The defaulting webhook
// calls it on admission, and the controller on the object it reads (one
// admitted while the webhook was down, or stored by an earlier release, may
// lack a default): both see the same spec. tokenTTL is the default token
// TTL, DefaultTokenTTL when zero; the webhook passes a lower one when the
// namespace's VaultServer caps it.
func (app *VaultApp) SetDefaults(tokenTTL time.Duration) {
	spec := &app.Spec
	if len(spec.KubernetesAuth.ServiceAccounts) == 0 && app.Name != "" {
		spec.KubernetesAuth.ServiceAccounts = []string{app.Name}
	}
	if spec.KubernetesAuth.TokenTTL == nil {
		if tokenTTL == 0 {
			tokenTTL = DefaultTokenTTL
		}
		spec.KubernetesAuth.TokenTTL = &metav1.Duration{Duration: tokenTTL}
	}
	if spec.RefreshInterval == nil {
		spec.RefreshInterval = &metav1.Duration{Duration: DefaultRefreshInterval}
	}
	if spec.DeletionPolicy == "" {
		spec.DeletionPolicy = DeletionPolicyDelete
	}
}
