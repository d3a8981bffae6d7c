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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
)

// What a pass over a KeycloakClientCredential reports. Deciding it is pure
// (decideStatus, table-tested); the pass writes the status it returns once.

// outcome is what the acting part of a pass did.
type outcome struct {
	// source is why the client secret could not be had; nothing was
	// written then, and the Secrets stay as they were.
	source *sourceError
	// targets is each target namespace's result.
	targets []secretsv1beta1.TargetStatus
	// retry joins the target failures worth retrying.
	retry error
	// serves is how long the secret served from memory still serves (zero
	// when read from Keycloak in this pass).
	serves time.Duration
	// refreshed is the refresh request this pass read Keycloak for.
	refreshed string
	// rotationOutcome is what the rotation phase did; its notices gain the
	// targets' refusals and failures new in this pass.
	rotationOutcome
}

// refusal is a request that was not acted on, and why.
type refusal struct{ request, message string }

// notice is an Event to record.
type notice struct{ eventType, reason, message string }

// changedKeycloak: the notice says what the pass did in Keycloak, which no
// later pass does again (the regeneration is recorded ahead of Keycloak,
// in a write of its own); the others report a state, which the next pass
// reports again when this one's status write failed. An invalidation is
// such a state: its phase is saved by the pass's status write, and a pass
// after a lost write invalidates (nothing more) and says so again.
func (n notice) changedKeycloak() bool {
	switch n.reason {
	case secretsv1beta1.ReasonRotated, secretsv1beta1.ReasonRotatedWithoutGrace:
		return true
	}
	return false
}

// decideStatus is the status a pass reports, from the status the pass
// started from (before) and the one its writes left (kcc's: the Secrets it
// recorded, a rotation): SourceAvailable, SecretsSynced, Ready as their
// summary, the targets, when the Secrets were last brought in step, the
// requests handled, and the Events: a Warning when a failure to read the
// source is new or a rotation request is refused, a Normal one when a
// refresh request was honoured.
func decideStatus(kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus, out outcome, now time.Time) (secretsv1beta1.KeycloakClientCredentialStatus, []notice) {
	st := *kcc.Status.DeepCopy()
	gen := kcc.Generation
	notices := append([]notice(nil), out.notices...)
	if r := out.rotationRefused; r != nil {
		// Handled once: a refused request is not tried again when a grant
		// comes later; a new id asks again.
		st.LastRotationRequest = r.request
		notices = append(notices, notice{corev1.EventTypeWarning, secretsv1beta1.ReasonRotationRequestRefused,
			fmt.Sprintf("rotation request %q not acted on: %s", r.request, r.message)})
	}
	if out.source == nil && out.refreshed != "" {
		st.LastRefreshRequest = out.refreshed
		notices = append(notices, notice{corev1.EventTypeNormal, secretsv1beta1.ReasonRefreshed,
			fmt.Sprintf("read the secret of client %q from Keycloak on request %q", kcc.Spec.Source.ClientID, out.refreshed)})
	}
	if out.source != nil {
		conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeSourceAvailable, false, out.source.reason, out.source.Error())
	} else {
		conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeSourceAvailable, true, secretsv1beta1.ReasonSynced,
			fmt.Sprintf("read the secret of client %q in realm %q", kcc.Spec.Source.ClientID, kcc.Spec.Source.Realm))
		reportTargets(kcc, before, &st, out.targets, now)
		st.ObservedGeneration = gen
		if allAccepted(out.targets) {
			if n, ok := distributed(kcc, &st, now); ok {
				notices = append(notices, n)
			}
		}
	}
	notices = append(notices, reportRotation(kcc, &st, before, out.graceRefused, out.rotationWaits)...)
	synced := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeSecretsSynced)
	reason, message := "", ""
	if synced != nil {
		reason, message = synced.Reason, synced.Message
	}
	conditions.SetSummaryWith(&st.Conditions, gen, secretsv1beta1.TypeReady, reason, message,
		secretsv1beta1.TypeSourceAvailable, secretsv1beta1.TypeSecretsSynced, secretsv1beta1.TypeRotationReady)
	if out.source != nil && !equality.Semantic.DeepEqual(before.Conditions, st.Conditions) {
		notices = append(notices, notice{corev1.EventTypeWarning, out.source.reason, out.source.Error()})
	}
	return st, notices
}

// reportTargets sets the targets and SecretsSynced of a pass that read the
// source; the last sync time moves when every target is in step and
// something changed.
func reportTargets(kcc *secretsv1beta1.KeycloakClientCredential, before, st *secretsv1beta1.KeycloakClientCredentialStatus, targets []secretsv1beta1.TargetStatus, now time.Time) {
	st.Targets = targets
	var failed []string
	for _, t := range targets {
		if t.Synced {
			continue
		}
		failed = append(failed, t.Namespace+": "+t.Message)
	}
	if len(failed) > 0 {
		reason := secretsv1beta1.ReasonPartiallySynced
		if len(failed) == len(targets) {
			reason = targets[0].Reason
		}
		msg := fmt.Sprintf("%d of %d target(s) not in step: %s", len(failed), len(targets), joinShort(failed))
		conditions.Set(&st.Conditions, kcc.Generation, secretsv1beta1.TypeSecretsSynced, false, reason, msg)
		return
	}
	msg := fmt.Sprintf("Secret %s is in step in %d namespace(s)", kcc.Spec.Target.SecretName, len(targets))
	conditions.Set(&st.Conditions, kcc.Generation, secretsv1beta1.TypeSecretsSynced, true, secretsv1beta1.ReasonSynced, msg)
	if st.LastSyncTime == nil || !equality.Semantic.DeepEqual(before.Targets, st.Targets) {
		at := metav1.NewTime(now)
		st.LastSyncTime = &at
	}
}

// reportRotation sets RotationReady on a resource that rotates (or did):
// False while a due rotation is refused for want of a grace period, else
// True with the phase of the last rotation. A refusal is announced once.
func reportRotation(kcc *secretsv1beta1.KeycloakClientCredential, st *secretsv1beta1.KeycloakClientCredentialStatus, before *secretsv1beta1.KeycloakClientCredentialStatus, graceRefused, waits string) []notice {
	gen := kcc.Generation
	if graceRefused != "" {
		changed := conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeRotationReady, false, secretsv1beta1.ReasonGraceUnavailable, "rotation not started: "+graceRefused)
		wasRefused := meta.IsStatusConditionPresentAndEqual(before.Conditions, secretsv1beta1.TypeRotationReady, metav1.ConditionFalse)
		if changed && !wasRefused {
			return []notice{{corev1.EventTypeWarning, secretsv1beta1.ReasonGraceUnavailable, "rotation not started: " + graceRefused}}
		}
		return nil
	}
	rot := st.Rotation
	switch {
	case waits != "":
		conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeRotationReady, true, secretsv1beta1.ReasonRotationWaiting, waits)
	case rot != nil && rot.Phase != secretsv1beta1.RotationCompleted:
		conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeRotationReady, true, rot.Phase, rotationMessage(kcc, rot))
	case rot != nil && consumersOf(kcc) != nil && len(consumersIn(rot, secretsv1beta1.ConsumerTimedOut)) > 0:
		// Until the next rotation: the app team looks at these rollouts.
		conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeRotationReady, false, secretsv1beta1.ReasonConsumersTimedOut,
			fmt.Sprintf("the last rotation invalidated the previous secret before %s rolled out", strings.Join(consumersIn(rot, secretsv1beta1.ConsumerTimedOut), ", ")))
	case kcc.Spec.Rotation != nil || rot != nil:
		msg := "no rotation in progress"
		if due, ok := kcc.RotationDueAt(); ok {
			msg += "; the next is due at " + due.UTC().Format(time.RFC3339)
		}
		conditions.Set(&st.Conditions, gen, secretsv1beta1.TypeRotationReady, true, secretsv1beta1.ReasonRotationIdle, msg)
	default:
		meta.RemoveStatusCondition(&st.Conditions, secretsv1beta1.TypeRotationReady)
	}
	return nil
}

func rotationMessage(kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus) string {
	switch rot.Phase {
	case secretsv1beta1.RotationRegenerating:
		return "asking Keycloak for a new secret"
	case secretsv1beta1.RotationDistributing:
		if !rot.WithGrace {
			return "writing the new secret to every target (without a grace period)"
		}
		return "writing the new secret to every target; the previous one stays valid"
	}
	msg := "every target holds the new secret; the previous one stays valid until " + rot.GraceEndsTime.UTC().Format(time.RFC3339)
	if consumersOf(kcc) != nil {
		msg += consumersMessage(rot)
	}
	return msg
}

// allAccepted: every target that accepts the Secret holds it. A namespace
// that withdrew its consent, or a Secret in the way that is not the
// operator's, is not waited for: the operator may not write there, and a
// rotation must not stall on it (SecretsSynced reports it).
func allAccepted(targets []secretsv1beta1.TargetStatus) bool {
	for _, t := range targets {
		if !t.Synced && t.Reason != secretsv1beta1.ReasonTargetNotAllowed && t.Reason != secretsv1beta1.ReasonSecretNotOwned {
			return false
		}
	}
	return true
}

func joinShort(items []string) string {
	const limit = 3
	if len(items) > limit {
		return fmt.Sprintf("%s; and %d more", strings.Join(items[:limit], "; "), len(items)-limit)
	}
	return strings.Join(items, "; ")
}
