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

package secrets

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
)

// finalize removes the Secrets written for the resource (Delete), or leaves
// them (Retain). Keycloak is not needed for either.
func (r *KeycloakClientCredentialReconciler) finalize(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) error {
	if !controllerutil.ContainsFinalizer(kcc, CredentialFinalizer) {
		return nil
	}
	if kcc.Spec.DeletionPolicy != secretsv1beta1.DeletionPolicyRetain {
		released := 0
		for _, w := range r.writtenSecrets(ctx, kcc, &kcc.Status) {
			did, err := r.release(ctx, w)
			if err != nil {
				return err
			}
			if did != "" {
				released++
			}
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, secretsv1beta1.ReasonDeleted, "Delete", "released %d Secret(s): deleted, or only the operator's keys removed where others added keys", released)
	} else {
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, secretsv1beta1.ReasonRetained, "Delete", "left the Secrets in place (deletionPolicy Retain)")
	}
	return finalizers.Release(ctx, r.Client, kcc, CredentialFinalizer)
}
