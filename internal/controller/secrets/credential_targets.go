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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// The target Secrets of a KeycloakClientCredential: written, repaired,
// pruned, each only where the operator wrote it.

// distribution is what the distribution phase did: each target's result,
// the namespaces whose client secret changed outside a rotation, the
// failures worth retrying, and the refusals and failures new in this pass.
type distribution struct {
	targets []secretsv1beta1.TargetStatus
	changed []string
	retry   error
	notices []notice
}

// distribute brings every target Secret in step with data, writing only
// what differs.
func (r *KeycloakClientCredentialReconciler) distribute(ctx context.Context, sc *scope, data map[string][]byte) distribution {
	namespaces := tenancy.TargetNamespaces(sc.kcc)
	d := distribution{targets: make([]secretsv1beta1.TargetStatus, 0, len(namespaces))}
	for _, ns := range namespaces {
		res, warnings, secretChanged, err := r.syncTarget(ctx, sc.kcc, ns, data, sc.before)
		if secretChanged {
			d.changed = append(d.changed, ns)
		}
		d.targets = append(d.targets, res)
		d.retry = errors.Join(d.retry, err)
		d.notices = append(d.notices, warnings...)
	}
	return d
}

// syncTarget brings one target Secret in step; changed says its client
// secret changed outside a rotation. The error is for a failure worth
// retrying; a refusal (no consent, foreign Secret) is only reported, in the
// status, with a Warning when it is new (recorded once the status is
// written).
func (r *KeycloakClientCredentialReconciler) syncTarget(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string, data map[string][]byte, before *secretsv1beta1.KeycloakClientCredentialStatus) (res secretsv1beta1.TargetStatus, warnings []notice, changed bool, err error) {
	res = secretsv1beta1.TargetStatus{Namespace: ns}
	fail := func(reason, msg string, err error) (secretsv1beta1.TargetStatus, []notice, bool, error) {
		res.Reason, res.Message = reason, msg
		if slices.Contains(before.Targets, res) {
			return res, nil, false, err
		}
		warning := notice{corev1.EventTypeWarning, reason, fmt.Sprintf("namespace %s: %s", ns, msg)}
		return res, []notice{warning}, false, err
	}
	if refused := r.targetRefusal(ctx, kcc, ns); refused != nil {
		return fail(refused.reason, refused.msg, refused.err)
	}
	current, done, err := r.findOrCreateTarget(ctx, kcc, ns, data, before)
	switch {
	case err != nil:
		return r.failedWrite(kcc, ns, err, fail)
	case done:
		res.Synced, res.Reason = true, secretsv1beta1.ReasonSynced
		return res, nil, false, nil
	}
	if msg := r.claimTarget(current, kcc, data); msg != "" {
		if ns == kcc.Namespace {
			return fail(secretsv1beta1.ReasonSecretNotOwned, msg, nil)
		}
		// Another team's Secret: what it holds is told to that team, on the
		// Secret, never to the tenant.
		res, warnings, _, err = fail(secretsv1beta1.ReasonSecretNotOwned, "a Secret of the name in spec.target.secretName is in the way: left untouched; "+
			"that namespace's team sees why in its Events", nil)
		if len(warnings) > 0 {
			r.Recorder.Eventf(current, nil, corev1.EventTypeWarning, secretsv1beta1.ReasonSecretNotOwned, "Sync", "%s (for KeycloakClientCredential %s/%s)", msg, kcc.Namespace, kcc.Name)
		}
		return res, warnings, false, err
	}
	changed = secretChangedOutsideRotation(current, kcc, data, before)
	if err := r.updateTarget(ctx, current, kcc, data); err != nil {
		return r.failedWrite(kcc, ns, err, fail)
	}
	res.Synced, res.Reason = true, secretsv1beta1.ReasonSynced
	return res, nil, changed, nil
}

// failedWrite reports a target Secret the API server did not write. In
// another namespace, its admission policies and quotas, and their words,
// are that team's: told on the Secret's name there; the tenant learns only
// that the write failed there.
func (r *KeycloakClientCredentialReconciler) failedWrite(kcc *secretsv1beta1.KeycloakClientCredential, ns string, err error,
	fail func(reason, msg string, err error) (secretsv1beta1.TargetStatus, []notice, bool, error)) (secretsv1beta1.TargetStatus, []notice, bool, error) {
	if ns == kcc.Namespace {
		return fail(secretsv1beta1.ReasonTargetFailed, err.Error(), err)
	}
	res, warnings, _, err := fail(secretsv1beta1.ReasonTargetFailed, "the Secret could not be written in that namespace (tried again); that namespace's team sees why in its Events", err)
	if len(warnings) > 0 {
		there := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kcc.Spec.Target.SecretName}}
		r.Recorder.Eventf(there, nil, corev1.EventTypeWarning, secretsv1beta1.ReasonTargetFailed, "Sync", "%v (for KeycloakClientCredential %s/%s)", err, kcc.Namespace, kcc.Name)
	}
	return res, warnings, false, err
}

// secretChangedOutsideRotation: the Secret held what the operator last
// wrote, the spec is the one it was written for, no rotation is under way,
// and the client secret to write now differs: the secret was regenerated
// in Keycloak by someone else (a tenant's edit of the Secret is a repair,
// not a change).
func secretChangedOutsideRotation(current *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte, before *secretsv1beta1.KeycloakClientCredentialStatus) bool {
	key := kcc.Spec.Target.Keys.ClientSecret
	held, ok := current.Data[key]
	if !ok || edited(current) || inProgress(kcc) != nil || kcc.Generation != before.ObservedGeneration {
		return false
	}
	return string(held) != string(valueDigest(data[key]))
}

// findOrCreateTarget returns the target Secret in ns as the cache holds it
// (digested), creating it when there is none: done when the create left
// nothing more to do.
func (r *KeycloakClientCredentialReconciler) findOrCreateTarget(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string, data map[string][]byte, before *secretsv1beta1.KeycloakClientCredentialStatus) (*corev1.Secret, bool, error) {
	name := kcc.Spec.Target.SecretName
	var current corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &current)
	switch {
	case err == nil:
		return &current, false, nil
	case !apierrors.IsNotFound(err):
		return nil, false, err
	}
	// Not in the cache: it may still exist, unmanaged. A create never
	// replaces anything, so it is tried first, and only a Secret in the
	// way (AlreadyExists) is read from the API server to say whose it is:
	// a repaired deletion costs one request, not two.
	created, later, createErr := r.createTarget(ctx, kcc, ns, data)
	switch {
	case createErr == nil:
		record(&kcc.Status, created)
		r.created.Store(created.UID, kcc.UID)
		reason, verb := secretsv1beta1.ReasonCreated, "created"
		if wasSynced(before, ns) {
			reason, verb = secretsv1beta1.ReasonDriftRepaired, "re-created deleted"
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, reason, "Sync", "%s Secret %s/%s", verb, ns, name)
		if !later {
			return created, true, nil
		}
		// Written again before the create's answer came: checked as found.
	case !apierrors.IsAlreadyExists(createErr):
		return nil, false, fmt.Errorf("create Secret: %w", createErr)
	}
	// In the way: the operator's own Secret not in the cache yet (or
	// stripped of its labels), or someone else's; or the one just
	// created, written again since.
	if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &current); err != nil {
		return nil, false, err // gone meanwhile: try again
	}
	digest(&current) // the cache's form
	return &current, false, nil
}

// claimTarget records current as the credential's when it is (written for
// it, or adoptable), and says why it is left untouched otherwise: another
// owner, or keys, labels or annotations someone else set.
func (r *KeycloakClientCredentialReconciler) claimTarget(current *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) string {
	switch {
	case isOwnedBy(current, &kcc.Status):
		r.created.Delete(current.UID) // recorded where it lasts
	case r.createdFor(current.UID, kcc.UID), isAdoptable(current, kcc, &kcc.Status):
		record(&kcc.Status, current)
	default:
		return fmt.Sprintf("Secret %s/%s exists and was not written for this resource: left untouched", current.Namespace, current.Name)
	}
	if taken := foreignKeys(current, data); len(taken) > 0 {
		return fmt.Sprintf("Secret %s/%s holds key(s) %s that the operator did not write: left untouched (choose other keys in spec.target.keys)",
			current.Namespace, current.Name, strings.Join(taken, ", "))
	}
	if taken := foreignMeta(current, kcc); len(taken) > 0 {
		return fmt.Sprintf("Secret %s/%s holds %s with another value, set by someone else: left untouched (choose other labels or annotations in spec.target)",
			current.Namespace, current.Name, strings.Join(taken, ", "))
	}
	return ""
}

// updateTarget applies what differs to the credential's Secret, in place
// (tools such as Reloader watch updates), with the Event of a change.
func (r *KeycloakClientCredentialReconciler) updateTarget(ctx context.Context, current *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) error {
	if !needsApply(current, kcc, data) {
		return nil
	}
	wasEdited, bucketOnly := edited(current), lacksBucketAlone(current, kcc, data)
	if err := r.applyTarget(ctx, current, kcc, data); err != nil {
		return fmt.Errorf("update Secret: %w", err)
	}
	if bucketOnly {
		return nil // a Secret of an earlier release labelled: nothing to tell
	}
	reason, msg := secretsv1beta1.ReasonUpdated, "updated Secret %s/%s"
	if wasEdited {
		reason, msg = secretsv1beta1.ReasonDriftRepaired, "restored edited Secret %s/%s"
	}
	r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, reason, "Sync", msg, current.Namespace, current.Name)
	return nil
}

// createTarget creates the target Secret in ns, its watch event known as
// its own whichever comes first (ownWrites.creating); later says another
// version of it was seen before the create's answer.
func (r *KeycloakClientCredentialReconciler) createTarget(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string, data map[string][]byte) (created *corev1.Secret, later bool, err error) {
	created = newTargetSecret(kcc, ns, data)
	done := r.echoes.creating(ns, created.Name)
	defer done(nil) // a create that panicked leaves no mark behind
	if err := r.Create(ctx, created, client.FieldOwner(FieldManager)); err != nil {
		return nil, false, err
	}
	return created, done(created), nil
}

// createdFor reports whether this process created the Secret of that UID
// for the resource of that UID (its status may not say so yet).
func (r *KeycloakClientCredentialReconciler) createdFor(secret, resource types.UID) bool {
	owner, ok := r.created.Load(secret)
	return ok && owner.(types.UID) == resource
}
