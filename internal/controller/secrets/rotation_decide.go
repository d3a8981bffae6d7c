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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// The rotation's decisions, pure and table-tested: which step a pass takes,
// whether Keycloak keeps a grace long enough, when the targets hold the new
// secret. credential_rotation.go takes the steps.

// rotationStep is what a pass does about the rotation.
type rotationStep int

// rotation is what decideRotation found: the step, the request that starts
// a rotation ("" for a scheduled one), and why one is abandoned.
type rotation struct {
	step    rotationStep
	request string
	why     string
}

// acts says whether the step changes the client in Keycloak (and so needs
// the right to rotate it, checked again before it is taken).
func (r rotation) acts() bool { return r.step == stepRegenerate || r.step == stepInvalidate }

// inProgress is the rotation the status shows under way, nil when none.
func inProgress(kcc *secretsv1beta1.KeycloakClientCredential) *secretsv1beta1.RotationStatus {
	if st := kcc.Status.Rotation; st != nil && st.Phase != secretsv1beta1.RotationCompleted {
		return st
	}
	return nil
}

// sameClient says whether the spec still names the client being rotated.
func sameClient(kcc *secretsv1beta1.KeycloakClientCredential, st *secretsv1beta1.RotationStatus) bool {
	src := kcc.Spec.Source
	return st.Server == src.ServerRef.Name && st.Realm == src.Realm && st.ClientID == src.ClientID
}

// decideRotation: a rotation in progress goes on with its phase (or is
// abandoned when the spec names another client: a rotation acts only on
// the client it began with, whose rotation was granted); otherwise
// one starts when a rotation request is pending (and the gap after the last
// rotation has passed: a request inside it waits, pending), or when the
// interval has passed since the last rotation (or since creation).
func decideRotation(kcc *secretsv1beta1.KeycloakClientCredential, now time.Time) rotation {
	if st := inProgress(kcc); st != nil {
		if !sameClient(kcc, st) {
			return rotation{step: stepAbandon, why: fmt.Sprintf("the spec no longer names client %q in realm %q of KeycloakServer %q", st.ClientID, st.Realm, st.Server)}
		}
		switch st.Phase {
		case secretsv1beta1.RotationRegenerating:
			return rotation{step: stepRegenerate}
		case secretsv1beta1.RotationDistributing:
			return rotation{step: stepDistribute}
		case secretsv1beta1.RotationGracePeriod:
			if consumersPending(kcc, st, now) || st.GraceEndsTime != nil && now.Before(st.GraceEndsTime.Time) {
				return rotation{step: stepWait}
			}
			return rotation{step: stepInvalidate}
		}
	}
	if id := kcc.PendingRotation(); id != "" && !now.Before(kcc.RotationRequestAllowedAt()) {
		return rotation{step: stepStart, request: id}
	}
	if due, ok := kcc.RotationDueAt(); ok && !now.Before(due) {
		return rotation{step: stepStart}
	}
	return rotation{step: stepNone}
}

// clientRotationWait says until when a new rotation of the client must wait,
// from Keycloak's own record of its secrets, which no re-created or second
// resource resets: RotationRequestGap after the current secret was issued
// (readers in every namespace and cluster need a refresh to catch up), and
// the previous secret's expiry while an earlier rotation keeps it valid for
// readers not caught up yet (a regeneration would end it). "" when it may
// start now.
func clientRotationWait(clientID string, state keycloak.SecretState, now time.Time) string {
	issuedGap := state.CreatedAt.Add(secretsv1beta1.RotationRequestGap)
	switch {
	case now.Before(state.PreviousExpires) && !state.PreviousExpires.Before(issuedGap):
		return fmt.Sprintf("client %q may be rotated again from %s: its previous secret stays valid until then for readers that have not read the current one, and a new rotation would end it",
			clientID, state.PreviousExpires.UTC().Format(time.RFC3339))
	case !state.CreatedAt.IsZero() && now.Before(issuedGap):
		return fmt.Sprintf("client %q may be rotated again from %s: its current secret was issued at %s, and a client is rotated at most once per %s, whichever resource asks",
			clientID, issuedGap.UTC().Format(time.RFC3339), state.CreatedAt.UTC().Format(time.RFC3339), secretsv1beta1.RotationRequestGap)
	}
	return ""
}

// previousValid: the phase in which the previous secret is still valid and
// written under its key.
func previousValid(kcc *secretsv1beta1.KeycloakClientCredential) bool {
	st := inProgress(kcc)
	return st != nil && st.WithGrace && sameClient(kcc, st) &&
		(st.Phase == secretsv1beta1.RotationDistributing || st.Phase == secretsv1beta1.RotationGracePeriod)
}

// decideGrace: a rotation goes ahead with grace when Keycloak keeps the
// previous secret for the grace period and the time to distribute; without
// it only when the spec accepts downtime.
func decideGrace(grace keycloak.Grace, period time.Duration, acceptDowntime bool) (withGrace bool, why string) {
	need := period + distributionAllowance
	switch {
	case grace.Offered && grace.Lifetime >= need:
		return true, ""
	case acceptDowntime:
		return false, ""
	case !grace.Offered:
		return false, fmt.Sprintf("Keycloak would not keep the previous secret valid (%s); set spec.rotation.acceptDowntime to rotate anyway, with failed logins until every workload reads the new secret", grace.Why)
	}
	return false, fmt.Sprintf("Keycloak keeps the previous secret valid for %s (rotated-expiration-period of the secret-rotation executor), less than spec.rotation.gracePeriod %s plus %s to write the targets", grace.Lifetime, period, distributionAllowance)
}

// distributed moves a rotation whose targets all hold the new secret into
// its grace period (or, without one, to its end).
func distributed(kcc *secretsv1beta1.KeycloakClientCredential, st *secretsv1beta1.KeycloakClientCredentialStatus, now time.Time) (notice, bool) {
	rot := st.Rotation
	if rot == nil || rot.Phase != secretsv1beta1.RotationDistributing {
		return notice{}, false
	}
	at := metav1.NewTime(now)
	rot.DistributedTime = &at
	if !rot.WithGrace {
		rot.Phase, rot.CompletedTime = secretsv1beta1.RotationCompleted, &at
		return notice{corev1.EventTypeNormal, secretsv1beta1.ReasonRotationDistributed,
			fmt.Sprintf("every target holds the new secret of client %q", kcc.Spec.Source.ClientID)}, true
	}
	grace := kcc.GracePeriod()
	if rot.GracePeriod != nil {
		grace = rot.GracePeriod.Duration // as the rotation began
	}
	ends := metav1.NewTime(now.Add(grace))
	if exp := rot.PreviousExpiresTime; exp != nil && exp.Before(&ends) {
		ends = *exp // Keycloak stops accepting it then anyway
	}
	rot.Phase, rot.GraceEndsTime = secretsv1beta1.RotationGracePeriod, &ends
	return notice{corev1.EventTypeNormal, secretsv1beta1.ReasonRotationDistributed,
		fmt.Sprintf("every target holds the new secret of client %q; the previous one stays valid until %s", kcc.Spec.Source.ClientID, ends.UTC().Format(time.RFC3339))}, true
}

// completed ends a rotation whose previous secret was invalidated.
func completed(kcc *secretsv1beta1.KeycloakClientCredential, now time.Time) {
	at := metav1.NewTime(now)
	kcc.Status.Rotation.Phase, kcc.Status.Rotation.CompletedTime = secretsv1beta1.RotationCompleted, &at
}

const (
	// stepNone: no rotation in progress, none due.
	stepNone rotationStep = iota
	// stepStart: a rotation is due or asked for; none is in progress.
	stepStart
	// stepRegenerate: a rotation recorded as Regenerating (a restart came
	// in between): regenerate unless Keycloak shows it done.
	stepRegenerate
	// stepDistribute: the new secret goes to every target.
	stepDistribute
	// stepWait: the grace period runs, or the consumers roll out.
	stepWait
	// stepInvalidate: the grace period is over.
	stepInvalidate
	// stepAbandon: the rotation in progress may not go on (the spec names
	// another client, or the grants no longer allow rotating it).
	stepAbandon
)

// distributionAllowance is the time a rotation allows, beyond the grace
// period, for writing the new secret to every target: Keycloak must keep
// the previous secret at least that much longer.
const distributionAllowance = 5 * time.Minute
