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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// applyTarget writes the operator's fields to its Secret s (digested, as
// decided on). The apply is forced: every field in it is the operator's
// (foreignKeys was checked on s), and it holds only if s is still the
// Secret it read (resourceVersion), so nothing added since is taken.
func (r *KeycloakClientCredentialReconciler) applyTarget(ctx context.Context, s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) error {
	labels, annotations := desiredMeta(kcc, data)
	if former := formerEntries(s, labels, annotations, data); former.Len() > 0 {
		var err error
		if s, err = r.takeOver(ctx, s, former); err != nil {
			return err
		}
	}
	applied := appliedSecret(s, kcc, data)
	if err := r.Apply(ctx, applied, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	if applied.ResourceVersion != nil {
		r.echoes.wroteVersion(s.Namespace, s.Name, *applied.ResourceVersion)
	}
	return nil
}

// takeOver merges the former Update entries of the operator's writes into
// its apply entry, so that what they wrote and the operator no longer
// applies is removed like the rest. It is done once per Secret, just
// before a write that drops such a field; the cache holds only the
// operator's entries, so the full list is read from the API server.
func (r *KeycloakClientCredentialReconciler) takeOver(ctx context.Context, s *corev1.Secret, former sets.Set[string]) (*corev1.Secret, error) {
	if r.Reader == nil {
		return s, nil
	}
	var live corev1.Secret
	if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(s), &live); err != nil {
		return nil, fmt.Errorf("read Secret %s/%s to take over its fields: %w", s.Namespace, s.Name, err)
	}
	if live.UID != s.UID || live.ResourceVersion != s.ResourceVersion {
		return nil, fmt.Errorf("take over Secret %s/%s: it changed since it was read; trying again", s.Namespace, s.Name)
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(&live, former, FieldManager)
	if err != nil || patch == nil {
		return s, err
	}
	// The patch replaces managedFields only if the resourceVersion is
	// still the one read.
	if err := r.Patch(ctx, &live, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return nil, fmt.Errorf("take over the fields of Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	digest(&live)
	live.ManagedFields = operatorEntries(live.ManagedFields)
	return &live, nil
}
