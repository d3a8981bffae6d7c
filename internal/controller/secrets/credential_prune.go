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

// Releasing the Secrets a credential no longer targets.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// pruneUntargeted releases the Secrets this resource wrote where it no
// longer writes (another namespace, another name). A Secret it could not
// release stays recorded, and is tried again.
func (r *KeycloakClientCredentialReconciler) pruneUntargeted(ctx context.Context, sc *scope) error {
	kcc, before := sc.kcc, sc.before
	targets := tenancy.TargetNamespaces(kcc)
	var errs error
	for _, w := range r.writtenSecrets(ctx, kcc, before) {
		if slices.Contains(targets, w.Namespace) && w.Name == kcc.Spec.Target.SecretName {
			continue
		}
		did, err := r.release(ctx, w)
		if err != nil {
			errs = errors.Join(errs, fmt.Errorf("no longer a target: %w", err))
			continue
		}
		forget(&kcc.Status, w.Namespace, w.Name)
		if did != "" {
			r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, secretsv1beta1.ReasonDeleted, "Prune", "%s, no longer a target", did)
		}
	}
	return errs
}

// writtenSecrets are the Secrets the operator wrote for kcc: the ones the
// status records, and the adoptable ones at its targets (isAdoptable) —
// for a resource last reconciled by a release that recorded none.
func (r *KeycloakClientCredentialReconciler) writtenSecrets(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, status *secretsv1beta1.KeycloakClientCredentialStatus) []secretsv1beta1.WrittenSecret {
	out := slices.Clone(status.Secrets)
	places := tenancy.TargetNamespaces(kcc)
	for _, t := range status.Targets {
		places = append(places, t.Namespace)
	}
	slices.Sort(places)
	for _, ns := range slices.Compact(places) {
		if slices.ContainsFunc(out, func(w secretsv1beta1.WrittenSecret) bool {
			return w.Namespace == ns && w.Name == kcc.Spec.Target.SecretName
		}) {
			continue // recorded: nothing to adopt there
		}
		var s corev1.Secret
		key := client.ObjectKey{Namespace: ns, Name: kcc.Spec.Target.SecretName}
		// An earlier release's Secret is looked for, never one this pass
		// wrote (recorded in the status it returns): waiting for the
		// cache to show this pass's own write would cost every repair a
		// watch echo.
		err := r.Get(ctx, key, &s, client.DisableReadYourWritesConsistency)
		if apierrors.IsNotFound(err) && r.Shard.Sharded() && r.Reader != nil {
			// A shard's cache holds the Secrets labelled with its buckets:
			// one of an earlier release, without the label, is read here.
			if err = r.Reader.Get(ctx, key, &s); err == nil {
				digest(&s)
			}
		}
		if err == nil && isAdoptable(&s, kcc, status) {
			out = append(out, secretsv1beta1.WrittenSecret{Namespace: s.Namespace, Name: s.Name, UID: s.UID})
		}
	}
	return out
}

// release gives up one Secret the operator wrote. It deletes the Secret
// when only the operator's keys are in it; when others added keys, it
// removes the operator's keys and marks and leaves the rest. A Secret that
// is gone, is another Secret now (another UID), or carries none of the
// operator's marks any more (released already), is left alone. It says
// what it did, for the caller's Event.
func (r *KeycloakClientCredentialReconciler) release(ctx context.Context, w secretsv1beta1.WrittenSecret) (string, error) {
	var s corev1.Secret
	key := client.ObjectKey{Namespace: w.Namespace, Name: w.Name}
	err := r.Get(ctx, key, &s)
	if apierrors.IsNotFound(err) && r.Reader != nil {
		// Not in the cache: gone, or stripped of the operator's labels
		// (still the operator's by its UID while its annotations say so).
		if err = r.Reader.Get(ctx, key, &s); err == nil {
			digest(&s)
		}
	}
	switch {
	case apierrors.IsNotFound(err) || (err == nil && (s.UID != w.UID || released(&s))):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read Secret %s/%s: %w", w.Namespace, w.Name, err)
	}
	// Both writes pass DisableReadYourWritesConsistency: the Secret may be
	// one the cache does not hold (read above from the API server), whose
	// deletion the cache would never show (manager.ClientOptions).
	if othersKeys(&s) {
		if err := r.Patch(ctx, &s, client.RawPatch(types.MergePatchType, releasePatch(&s)), client.FieldOwner(FieldManager), client.DisableReadYourWritesConsistency); client.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("remove the operator's keys from Secret %s/%s: %w", w.Namespace, w.Name, err)
		}
		return fmt.Sprintf("removed the operator's keys from Secret %s/%s and kept the keys others added", w.Namespace, w.Name), nil
	}
	// Only as read: a key added since (the cache lags) makes it a conflict,
	// and the next pass keeps that key.
	if err := r.Delete(ctx, &s, client.Preconditions{UID: &w.UID, ResourceVersion: &s.ResourceVersion}, client.DisableReadYourWritesConsistency); client.IgnoreNotFound(err) != nil {
		return "", fmt.Errorf("delete Secret %s/%s: %w", w.Namespace, w.Name, err)
	}
	return fmt.Sprintf("deleted Secret %s/%s", w.Namespace, w.Name), nil
}
