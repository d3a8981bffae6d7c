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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// applyTarget writes the operator's fields to its Secret s (digested, as
// decided on). The apply is forced: every field in it is the operator's
// (foreignKeys and foreignMeta were checked on s), and it holds only if s
// is still the Secret it read (resourceVersion), so nothing added since is
// taken.
func (r *KeycloakClientCredentialReconciler) applyTarget(ctx context.Context, s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) error {
	labels, annotations := desiredMeta(kcc, data)
	if held := heldByUpdates(s, dropped(s, labels, annotations, data)); len(held) > 0 {
		var err error
		if s, err = r.removeHeld(ctx, s, held); err != nil {
			return err
		}
	}
	applied := appliedSecret(s, labels, annotations, data)
	if err := r.Apply(ctx, applied, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	if applied.ResourceVersion != nil {
		r.echoes.wroteVersion(s.Namespace, s.Name, *applied.ResourceVersion)
	}
	return nil
}

// removeHeld removes fields the operator dropped that one of its Update
// entries (its create, an earlier release) still holds, which an apply
// would leave: by a merge patch conditional on the resourceVersion decided
// on. The cache keeps only the operator's entries, so the Secret is read
// first: a field another manager holds too is left to it. It returns the
// Secret as it now is, digested. Secrets of earlier releases need it only
// for what the spec drops: none is written for the upgrade alone.
func (r *KeycloakClientCredentialReconciler) removeHeld(ctx context.Context, s *corev1.Secret, held []string) (*corev1.Secret, error) {
	if r.Reader != nil {
		var live corev1.Secret
		if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(s), &live); err != nil {
			return nil, fmt.Errorf("read Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		shared := sharedWithOthers(&live, held)
		digest(&live)
		if live.ResourceVersion != s.ResourceVersion {
			return nil, fmt.Errorf("secret %s/%s changed since it was read; trying again", s.Namespace, s.Name)
		}
		held = slices.DeleteFunc(held, func(f string) bool { return slices.Contains(shared, f) })
		if len(held) == 0 {
			return s, nil
		}
	}
	nulls := map[string]map[string]any{fieldData: {}, fieldLabels: {}, fieldAnnotations: {}}
	for _, name := range held {
		kind, k, _ := strings.Cut(name, "/")
		nulls[kind][k] = nil
	}
	patch := marshal(map[string]any{
		fieldMetadata: map[string]any{"resourceVersion": s.ResourceVersion, fieldLabels: nulls[fieldLabels], fieldAnnotations: nulls[fieldAnnotations]},
		fieldData:     nulls[fieldData],
	})
	out := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}}
	// Opts out of read-your-writes: the Secret may be one the cache does
	// not hold (an earlier release's, read from the API server); the apply
	// that follows is waited for.
	if err := r.Patch(ctx, out, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager), client.DisableReadYourWritesConsistency); err != nil {
		return nil, fmt.Errorf("remove %s from Secret %s/%s: %w", strings.Join(held, ", "), s.Namespace, s.Name, err)
	}
	r.echoes.wrote(out)
	out.ManagedFields = operatorEntries(out)
	digest(out)
	return out, nil
}
