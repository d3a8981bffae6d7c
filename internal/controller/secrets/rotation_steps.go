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

// The rotation's steps in Keycloak, each recorded in status.rotation.

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// startRotation begins a rotation: none of another credential under way
// for the client, a grace period Keycloak keeps (or none asked), the
// client's own limits as Keycloak records them, then the step recorded
// ahead of Keycloak (a restart never regenerates twice) and the
// regeneration.
func (r *KeycloakClientCredentialReconciler) startRotation(ctx context.Context, server *secretsv1beta1.KeycloakServer, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI, rot rotation, out *rotationOutcome) (fresh bool, err error) {
	src := kcc.Spec.Source
	if other := r.otherRotation(ctx, server, kcc); other != "" {
		out.rotationWaits = fmt.Sprintf("waiting for the rotation of client %q by %s to complete (Keycloak keeps one previous secret per client)", src.ClientID, other)
		return false, nil
	}
	// The claim is kept only by a rotation that begins: one refused or
	// waiting must not hold off another resource's.
	begun := false
	defer func() {
		if !begun {
			r.releaseClaim(ctx, server, src.Realm, src.ClientID, kcc.UID)
		}
	}()
	withGrace, why := r.graceFor(ctx, kcc, kc)
	if why != "" {
		out.graceRefused = why
		if rot.request != "" {
			out.rotationRefused = &refusal{request: rot.request, message: why}
		}
		return false, nil
	}
	state, err := kc.SecretState(ctx, src.Realm, src.ClientID)
	if err != nil {
		return false, err
	}
	if wait := clientRotationWait(src.ClientID, state, r.now()); wait != "" {
		out.rotationWaits = wait
		return false, nil
	}
	// From here the claim stays, even when the record's answer is lost: a
	// claim whose rotation is not recorded expires (stillRotates).
	begun = true
	now := metav1.NewTime(r.now())
	grace := metav1.Duration{Duration: kcc.GracePeriod()}
	if err := r.recordRotation(ctx, kcc, true, func(st *secretsv1beta1.KeycloakClientCredentialStatus) {
		st.LastRotationTime = &now
		if rot.request != "" {
			st.LastRotationRequest = rot.request
		}
		st.Rotation = &secretsv1beta1.RotationStatus{Phase: secretsv1beta1.RotationRegenerating, Request: rot.request, WithGrace: withGrace,
			Server: src.ServerRef.Name, Realm: src.Realm, ClientID: src.ClientID, GracePeriod: &grace,
			PreviousSecretCreated: state.Created, StartedTime: &now}
	}); err != nil {
		return false, err
	}
	return true, r.regenerate(ctx, kcc, kc, src, out)
}

// releaseClaim gives back the claim of realm/clientID held by the
// credential of UID holder, after its rotation (best effort: the claim of
// a credential that no longer rotates is free anyway).
func (r *KeycloakClientCredentialReconciler) releaseClaim(ctx context.Context, server *secretsv1beta1.KeycloakServer, realm, clientID string, holder types.UID) {
	if r.Rotations == nil {
		return
	}
	if err := r.Rotations.release(ctx, server, realm, clientID, holder); err != nil {
		logf.FromContext(ctx).Error(err, "give back the claim of a rotation", "client", clientID)
	}
}

// otherRotation names another resource with a rotation of the same
// client under way ("" when none): Keycloak keeps one previous secret per
// client, and a second regeneration would invalidate the first's at once.
// With the operator's namespace, the client is claimed in the ConfigMap of
// rotations (RotationSignal.claim: atomic across shards and clusters'
// processes alike); not knowing makes the rotation wait. Without it, one
// process checks its cache.
func (r *KeycloakClientCredentialReconciler) otherRotation(ctx context.Context, server *secretsv1beta1.KeycloakServer, kcc *secretsv1beta1.KeycloakClientCredential) string {
	src := kcc.Spec.Source
	if r.Rotations != nil {
		other, err := r.Rotations.claim(ctx, server, kcc)
		if err != nil {
			logf.FromContext(ctx).Error(err, "claim a client for its rotation")
			return fmt.Sprintf("another resource, maybe (the claims on KeycloakServer %q's clients could not be read; tried again)", src.ServerRef.Name)
		}
		return other
	}
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list, client.MatchingFields{serverRefIndex: src.ServerRef.Name}); err != nil {
		return ""
	}
	for i := range list.Items {
		other := &list.Items[i]
		if st := inProgress(other); st != nil && other.UID != kcc.UID && sameClient(kcc, st) {
			return other.Namespace + "/" + other.Name
		}
	}
	return ""
}

// graceFor says whether the rotation keeps the previous secret valid, or
// why it may not go ahead. Not knowing (Keycloak failed to answer) is a
// reason not to start, tried again at the next refresh: the credential's
// Secrets are kept in step meanwhile.
func (r *KeycloakClientCredentialReconciler) graceFor(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI) (withGrace bool, why string) {
	grace, err := kc.RotationGrace(ctx, kcc.Spec.Source.Realm)
	if err != nil {
		return false, fmt.Sprintf("could not tell whether Keycloak keeps the previous secret (tried again at the next refresh): %v", err)
	}
	return decideGrace(grace, kcc.GracePeriod(), kcc.AcceptsDowntime())
}

// regenerate asks Keycloak for the new secret, then records it.
func (r *KeycloakClientCredentialReconciler) regenerate(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI, src secretsv1beta1.CredentialSource, out *rotationOutcome) error {
	if err := kc.RegenerateSecret(ctx, src.Realm, src.ClientID); err != nil {
		return err
	}
	state, err := kc.SecretState(ctx, src.Realm, src.ClientID)
	if err != nil {
		return err
	}
	return r.regenerated(ctx, kcc, src, state, out)
}

// regenerated records the new secret (phase Distributing), and whether
// Keycloak kept the previous one (state: read after the regeneration) when
// it said it would.
func (r *KeycloakClientCredentialReconciler) regenerated(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, src secretsv1beta1.CredentialSource, state keycloak.SecretState, out *rotationOutcome) error {
	withGrace := kcc.Status.Rotation.WithGrace
	switch {
	case withGrace && state.PreviousExpires.IsZero():
		withGrace = false
		out.notices = append(out.notices, notice{corev1.EventTypeWarning, secretsv1beta1.ReasonRotatedWithoutGrace,
			fmt.Sprintf("Keycloak did not keep the previous secret of client %q valid: workloads holding it fail to log in until they read the new one (does a client policy apply the secret-rotation executor to it?)", src.ClientID)})
	case !withGrace:
		out.notices = append(out.notices, notice{corev1.EventTypeWarning, secretsv1beta1.ReasonRotatedWithoutGrace,
			fmt.Sprintf("regenerated the secret of client %q without a grace period (spec.rotation.acceptDowntime): workloads holding the previous one fail to log in until they read the new one", src.ClientID)})
	}
	now := metav1.NewTime(r.now())
	request := kcc.Status.Rotation.Request
	if err := r.recordRotation(ctx, kcc, false, func(st *secretsv1beta1.KeycloakClientCredentialStatus) {
		st.Rotation.Phase = secretsv1beta1.RotationDistributing
		st.Rotation.WithGrace = withGrace
		st.Rotation.RegeneratedTime = &now
		st.Rotation.SecretCreated = state.Created
		if withGrace {
			expires := metav1.NewTime(state.PreviousExpires)
			st.Rotation.PreviousExpiresTime = &expires
		}
	}); err != nil {
		return err
	}
	onRequest := ""
	if request != "" {
		onRequest = fmt.Sprintf(" on request %q", request)
	}
	out.notices = append(out.notices, notice{corev1.EventTypeNormal, secretsv1beta1.ReasonRotated,
		fmt.Sprintf("regenerated the secret of client %q in Keycloak%s", src.ClientID, onRequest)})
	return nil
}

// invalidate ends the previous secret's validity once the grace is over,
// unless someone regenerated the secret since (the previous secret Keycloak
// keeps is then theirs) or the client is gone.
func (r *KeycloakClientCredentialReconciler) invalidate(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI, src secretsv1beta1.CredentialSource, out *rotationOutcome) error {
	rot := kcc.Status.Rotation
	message := fmt.Sprintf("the grace period passed: the previous secret of client %q is no longer valid", src.ClientID)
	if rot.WithGrace {
		state, err := kc.SecretState(ctx, src.Realm, src.ClientID)
		switch {
		case errors.Is(err, keycloak.ErrClientNotFound):
			message = fmt.Sprintf("the grace period passed; client %q is gone from Keycloak", src.ClientID)
		case err != nil:
			return err
		case rot.SecretCreated != "" && state.Created != rot.SecretCreated:
			message = fmt.Sprintf("the grace period passed; the secret of client %q was regenerated since, outside this rotation: the previous secret Keycloak keeps now is not this rotation's, and is left alone", src.ClientID)
		default:
			if err := kc.InvalidatePreviousSecret(ctx, src.Realm, src.ClientID); err != nil && !errors.Is(err, keycloak.ErrClientNotFound) {
				return err
			}
		}
	}
	// Written by the pass's status update: a repeat after a lost update
	// invalidates nothing more.
	completed(kcc, r.now())
	out.notices = append(out.notices, notice{corev1.EventTypeNormal, secretsv1beta1.ReasonPreviousSecretInvalidated, message})
	return nil
}
