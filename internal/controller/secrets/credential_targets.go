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
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// The target Secrets of a KeycloakClientCredential: written, repaired,
// pruned, each only where the operator wrote it.

// syncTarget brings one target Secret in step. The error is for a failure
// worth retrying; a refusal (no consent, foreign Secret) is only reported.
func (r *KeycloakClientCredentialReconciler) syncTarget(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string, data map[string][]byte, before *secretsv1beta1.KeycloakClientCredentialStatus) (secretsv1beta1.TargetStatus, error) {
	res := secretsv1beta1.TargetStatus{Namespace: ns}
	fail := func(reason, msg string, err error) (secretsv1beta1.TargetStatus, error) {
		res.Reason, res.Message = reason, msg
		if !slices.ContainsFunc(before.Targets, func(t secretsv1beta1.TargetStatus) bool { return t == res }) {
			r.Recorder.Eventf(kcc, nil, corev1.EventTypeWarning, reason, "Sync", "namespace %s: %s", ns, msg)
		}
		return res, err
	}
	name := kcc.Spec.Target.SecretName

	var namespace corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		return fail(shared.ReasonTargetFailed, "read namespace: "+err.Error(), client.IgnoreNotFound(err))
	}
	if !tenancy.ConsentsTo(&namespace, kcc.Namespace) {
		return fail(shared.ReasonTargetNotAllowed, fmt.Sprintf("namespace %s does not consent: its %s annotation does not list %q",
			ns, tenancy.AllowedSourceNamespacesAnnotation, kcc.Namespace), nil)
	}
	if msg := tenancy.SecretTypeRefusal(&namespace, kcc.Spec.Target.Type); msg != "" {
		return fail(shared.ReasonTargetNotAllowed, msg, nil)
	}

	var current corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &current)
	taken := foreignKeys(&current, data) // none when there is no Secret yet
	switch {
	case apierrors.IsNotFound(err):
		// Not in the cache: it may still exist, unmanaged. A create never
		// replaces anything, so it is tried first, and only a Secret in the
		// way (AlreadyExists) is read from the API server to say whose it is:
		// a repaired deletion costs one request, not two.
		if err := r.Create(ctx, newTargetSecret(kcc, ns, data)); apierrors.IsAlreadyExists(err) {
			var existing corev1.Secret
			if ferr := r.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &existing); ferr != nil {
				return fail(shared.ReasonTargetFailed, ferr.Error(), ferr)
			}
			if isOwnedBy(&existing, kcc, before) {
				// Written by this resource, not yet in the cache: look again.
				lag := fmt.Errorf("secret %s/%s is not in the cache yet", ns, name)
				return fail(shared.ReasonTargetFailed, lag.Error(), lag)
			}
			return fail(shared.ReasonSecretNotOwned, fmt.Sprintf("Secret %s/%s exists and was not written for this resource: left untouched", ns, name), nil)
		} else if err != nil {
			return fail(shared.ReasonTargetFailed, "create Secret: "+err.Error(), err)
		}
		reason, verb := shared.ReasonCreated, "created"
		if wasSynced(before, ns) {
			reason, verb = shared.ReasonDriftRepaired, "re-created deleted"
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, reason, "Sync", "%s Secret %s/%s", verb, ns, name)
	case err != nil:
		return fail(shared.ReasonTargetFailed, err.Error(), err)
	case !isOwnedBy(&current, kcc, before):
		return fail(shared.ReasonSecretNotOwned, fmt.Sprintf("Secret %s/%s is managed for another resource: left untouched", ns, name), nil)
	case len(taken) > 0:
		return fail(shared.ReasonSecretNotOwned, fmt.Sprintf("Secret %s/%s holds key(s) %s that the operator did not write: left untouched (choose other keys in spec.target.keys)",
			ns, name, strings.Join(taken, ", ")), nil)
	default:
		wasEdited := edited(&current)
		if applyDesired(&current, kcc, data) {
			// Updated in place: tools such as Reloader watch updates.
			if err := r.Update(ctx, &current); err != nil {
				return fail(shared.ReasonTargetFailed, "update Secret: "+err.Error(), err)
			}
			reason, msg := shared.ReasonUpdated, "updated Secret %s/%s"
			if wasEdited {
				reason, msg = shared.ReasonDriftRepaired, "restored edited Secret %s/%s"
			}
			r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, reason, "Sync", msg, ns, name)
		}
	}
	res.Synced, res.Reason = true, shared.ReasonSynced
	return res, nil
}

func wasSynced(status *secretsv1beta1.KeycloakClientCredentialStatus, ns string) bool {
	return slices.ContainsFunc(status.Targets, func(t secretsv1beta1.TargetStatus) bool { return t.Namespace == ns && t.Synced })
}

// pruneUntargeted removes the Secrets this resource wrote in namespaces it
// no longer targets (or under a name it no longer uses).
func (r *KeycloakClientCredentialReconciler) pruneUntargeted(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) error {
	written, err := r.writtenSecrets(ctx, kcc, before)
	if err != nil {
		return err
	}
	targets := tenancy.TargetNamespaces(kcc)
	var errs error
	for _, s := range written {
		if slices.Contains(targets, s.Namespace) && s.Name == kcc.Spec.Target.SecretName {
			continue
		}
		if err := r.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			errs = errors.Join(errs, fmt.Errorf("delete Secret %s/%s no longer targeted: %w", s.Namespace, s.Name, err))
			continue
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, shared.ReasonDeleted, "Prune", "deleted Secret %s/%s, no longer a target", s.Namespace, s.Name)
	}
	return errs
}

// writtenSecrets are the Secrets the operator wrote for kcc (isOwnedBy).
func (r *KeycloakClientCredentialReconciler) writtenSecrets(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, status *secretsv1beta1.KeycloakClientCredentialStatus) ([]*corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.MatchingLabels(ownedBy(kcc))); err != nil {
		return nil, fmt.Errorf("list owned Secrets: %w", err)
	}
	var out []*corev1.Secret
	for i := range list.Items {
		if isOwnedBy(&list.Items[i], kcc, status) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}
