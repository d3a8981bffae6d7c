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

package vault

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
)

// report is what one pass over a VaultApp says: its conditions, and the
// Event. Deciding it is pure (decideReport, table-tested); the pass only
// applies it and writes the status once. Ready is not decided: it is the
// summary of the others (apply).
type report struct {
	policy, role condition
	// access is AccessGranted: Unknown when the pass did not get as far
	// as deciding the grant (no server, Vault failed before it).
	access            *condition
	eventType, reason string
	// note is the Event's message; none is recorded when empty.
	note string
	// waits: the VaultApp is not looked at again until something it
	// depends on changes (no refresh).
	waits bool
	// changedVault: the Event says what the pass wrote to or removed from
	// Vault, which no later pass does again.
	changedVault bool
	// legacy is the text of a LegacyConfiguration Warning, when its
	// condition's message is new.
	legacy string
}

type condition struct {
	ok bool
	// unknown: neither true nor false (not looked at in this pass).
	unknown         bool
	reason, message string
}

// status is the condition's status.
func (c condition) status() metav1.ConditionStatus {
	switch {
	case c.unknown:
		return metav1.ConditionUnknown
	case c.ok:
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// failed is the report of a pass that could not bring Vault in step: the
// policy and role conditions false for the same reason, AccessGranted
// unknown (a pass that decided the grant sets it), and a Warning.
func failed(reason, msg string) report {
	c := condition{reason: reason, message: msg}
	return report{policy: c, role: c, access: &condition{unknown: true, reason: reason, message: "the grant was not checked: " + msg},
		eventType: corev1.EventTypeWarning, reason: reason, note: msg}
}

// refused is failed for a spec that is granted nothing: AccessGranted
// says so too.
func refused(reason, msg string) report {
	r := failed(reason, msg)
	r.access = &condition{reason: reason, message: msg}
	return r
}

// decideAccess is AccessGranted for a decided grant: True when nothing the
// spec asks was refused; False naming what was.
func decideAccess(app *vaultv1beta1.VaultApp, granted grant, refusedErrs field.ErrorList) *condition {
	switch {
	case len(refusedErrs) == 0:
		return &condition{ok: true, reason: vaultv1beta1.ReasonGranted, message: "the namespace's grant covers all the spec asks"}
	case !granted.empty() && granted.narrows(app):
		// NotAllowed, as the Ready it summarises into has always said;
		// PolicySynced says GrantNarrowed.
		return &condition{reason: vaultv1beta1.ReasonNotAllowed,
			message: "the spec asks more than the namespace is granted; Vault holds only what is granted: " + refusedErrs.ToAggregate().Error()}
	default:
		return &condition{reason: vaultv1beta1.ReasonNotAllowed, message: "the spec asks more than the namespace is granted: " + refusedErrs.ToAggregate().Error()}
	}
}

// decideReport is the report of a pass that brought Vault in step with the
// grant: granted is what the server grants of the spec, refusedErrs the
// rest, changed what the pass wrote. before is the status the pass started
// from.
func decideReport(app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, name string, granted grant, refusedErrs field.ErrorList, changed written) report {
	inStep := func(what string) condition {
		return condition{ok: true, reason: vaultv1beta1.ReasonSynced, message: what + " " + name + " equals the spec"}
	}
	access := decideAccess(app, granted, refusedErrs)
	switch {
	case granted.empty():
		msg := "nothing the spec asks is granted: " + refusedErrs.ToAggregate().Error()
		reason := vaultv1beta1.ReasonNotAllowed
		if changed != nothing {
			msg = fmt.Sprintf("removed policy and role %s from Vault: %s", name, msg)
			reason = vaultv1beta1.ReasonGrantRevoked
		}
		r := refused(vaultv1beta1.ReasonNotAllowed, msg)
		r.reason, r.changedVault = reason, changed != nothing
		return r
	case len(refusedErrs) > 0:
		// Narrowed (capabilities taken back), or a Retain the namespace
		// does not allow (the policy is whole; deletion will remove it).
		r := report{policy: inStep("policy"), role: inStep("role"), access: access, eventType: corev1.EventTypeWarning,
			reason: vaultv1beta1.ReasonNotAllowed, note: access.message, changedVault: changed != nothing}
		if granted.narrows(app) {
			r.policy = condition{ok: true, reason: vaultv1beta1.ReasonGrantNarrowed, message: "policy " + name + " holds only the granted part of the spec"}
			r.reason = vaultv1beta1.ReasonGrantNarrowed
		}
		return r
	}
	r := report{policy: inStep("policy"), role: inStep("role"), access: access, eventType: corev1.EventTypeNormal, reason: vaultv1beta1.ReasonSynced}
	switch {
	case changed == nothing && app.PendingRefresh() != "":
		// A refresh asked for by annotation says what it found.
		r.reason = vaultv1beta1.ReasonRefreshed
		r.note = fmt.Sprintf("read policy and role %s from Vault on request %q: in step", name, app.PendingRefresh())
		return r
	case changed == nothing:
		return r
	case before.ObservedGeneration == 0:
		r.reason = vaultv1beta1.ReasonCreated
	case before.ObservedGeneration != app.Generation, changed == roleTTLs:
		r.reason = vaultv1beta1.ReasonUpdated
	default:
		r.reason = vaultv1beta1.ReasonDriftRepaired
	}
	r.note, r.changedVault = fmt.Sprintf("%s %s in Vault", changed, name), true
	return r
}

// writeReport applies a report to the VaultApp and writes its status, only
// when it changed, then its Event: a Normal one for a change, a Warning
// when the conditions changed (not for a pass that found everything as it
// was). The Event follows the status it reports: after a failed write (a
// conflict) the next pass reports the same again, so only a change this
// pass made in Vault is recorded then. Every status write of a VaultApp
// goes through it.
func (r *VaultAppReconciler) writeReport(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, rep report) error {
	rep.apply(app)
	record := rep.note != "" && (rep.eventType == corev1.EventTypeNormal || !equality.Semantic.DeepEqual(before.Conditions, app.Status.Conditions))
	err := conditions.UpdateStatus(ctx, r.Client, app, before, &app.Status)
	if record && (err == nil || rep.changedVault) {
		r.Recorder.Eventf(app, nil, rep.eventType, rep.reason, "Reconcile", "%s", rep.note)
	}
	if rep.legacy != "" && err == nil {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, vaultv1beta1.ReasonLegacyConfiguration, "Configure", "%s", rep.legacy)
	}
	return err
}

// readyMessage is Ready's message when every other condition is True.
const readyMessage = "Vault policy and role are in step with the spec"

// apply sets the report's conditions on the VaultApp, and Ready as their
// summary: False with the first of PolicySynced, RoleSynced and
// AccessGranted that is not True.
func (r report) apply(app *vaultv1beta1.VaultApp) {
	conds, gen := &app.Status.Conditions, app.Generation
	conditions.Set(conds, gen, vaultv1beta1.TypePolicySynced, r.policy.ok, r.policy.reason, r.policy.message)
	conditions.Set(conds, gen, vaultv1beta1.TypeRoleSynced, r.role.ok, r.role.reason, r.role.message)
	if r.access != nil {
		meta.SetStatusCondition(conds, metav1.Condition{Type: vaultv1beta1.TypeAccessGranted, Status: r.access.status(),
			Reason: r.access.reason, Message: r.access.message, ObservedGeneration: gen})
	}
	conditions.SetSummaryWith(conds, gen, vaultv1beta1.TypeReady, vaultv1beta1.ReasonSynced, readyMessage,
		vaultv1beta1.TypePolicySynced, vaultv1beta1.TypeRoleSynced, vaultv1beta1.TypeAccessGranted)
}
