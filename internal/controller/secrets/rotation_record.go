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
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// recordRotation patches the status with a rotation's step at once, by a
// patch no concurrent status write can refuse: a status update that later
// fails on a conflict must not leave the step looking undone, or the next
// pass would take it again. locked makes the patch fail instead when the
// resource changed since it was read (its spec was checked against the
// grants as read).
func (r *KeycloakClientCredentialReconciler) recordRotation(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, locked bool, step func(*secretsv1beta1.KeycloakClientCredentialStatus)) error {
	before := kcc.DeepCopy()
	step(&kcc.Status)
	patch := client.MergeFrom(before)
	if locked {
		patch = client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	}
	if err := r.Status().Patch(ctx, kcc, patch); err != nil {
		return fmt.Errorf("record the rotation of client %q: %w", kcc.Spec.Source.ClientID, err)
	}
	// The manager's client reads its own writes (ClientOptions): a pass
	// that follows, even on a retry at once, reads this step.
	kcc.SetDefaults() // the patch read the object back as stored
	return nil
}
