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
	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
)

// report is what one pass over a VaultApp says: its three conditions, and
// the Event. Deciding it is pure (decideReport, table-tested); the pass
// only applies it and writes the status once.
type report struct {
	policy, role, ready condition
	eventType, reason   string
	// note is the Event's message; none is recorded when empty.
	note string
	// waits: the VaultApp is not looked at again until something it
	// depends on changes (no refresh).
	waits bool
}

type condition struct {
	ok              bool
	reason, message string
}

// failed is the report of a pass that could not bring Vault in step: every
// condition false for the same reason, and a Warning.
func failed(reason, msg string) report {
	c := condition{reason: reason, message: msg}
	return report{policy: c, role: c, ready: c, eventType: corev1.EventTypeWarning, reason: reason, note: msg}
}

// decideReport is the report of a pass that brought Vault in step with the
// grant: granted is what the server grants of the spec, refused the rest,
// changed what the pass wrote. before is the status the pass started from.
func decideReport(app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, name string, granted grant, refused field.ErrorList, changed written) report {
	inStep := func(what string) condition {
		return condition{ok: true, reason: vaultv1beta1.ReasonSynced, message: what + " " + name + " equals the spec"}
	}
	switch {
	case granted.empty():
		msg := "nothing the spec asks is granted: " + refused.ToAggregate().Error()
		reason := vaultv1beta1.ReasonNotAllowed
		if changed != nothing {
			msg = fmt.Sprintf("removed policy and role %s from Vault: %s", name, msg)
			reason = vaultv1beta1.ReasonGrantRevoked
		}
		r := failed(vaultv1beta1.ReasonNotAllowed, msg)
		r.reason = reason
		return r
	case len(refused) > 0:
		// Narrowed (capabilities taken back), or a Retain the namespace
		// does not allow (the policy is whole; deletion will remove it).
		r := report{policy: inStep("policy"), role: inStep("role"), eventType: corev1.EventTypeWarning, reason: vaultv1beta1.ReasonNotAllowed}
		msg := "the spec asks more than the namespace is granted: " + refused.ToAggregate().Error()
		if granted.narrows(app) {
			r.policy = condition{ok: true, reason: vaultv1beta1.ReasonGrantNarrowed, message: "policy " + name + " holds only the granted part of the spec"}
			r.reason = vaultv1beta1.ReasonGrantNarrowed
			msg = "the spec asks more than the namespace is granted; Vault holds only what is granted: " + refused.ToAggregate().Error()
		}
		r.ready = condition{reason: vaultv1beta1.ReasonNotAllowed, message: msg}
		r.note = msg
		return r
	}
	r := report{policy: inStep("policy"), role: inStep("role"), eventType: corev1.EventTypeNormal, reason: vaultv1beta1.ReasonSynced,
		ready: condition{ok: true, reason: vaultv1beta1.ReasonSynced, message: "Vault policy and role are in step with the spec"}}
	switch {
	case changed == nothing:
		return r
	case before.ObservedGeneration == 0:
		r.reason = vaultv1beta1.ReasonCreated
	case before.ObservedGeneration != app.Generation:
		r.reason = vaultv1beta1.ReasonUpdated
	default:
		r.reason = vaultv1beta1.ReasonDriftRepaired
	}
	r.note = fmt.Sprintf("%s %s in Vault", changed, name)
	return r
}

// writeReport applies a report to the VaultApp and writes its status, only
// when it changed, with its Event: a Normal one for a change, a Warning
// when the conditions changed (not for a pass that found everything as it
// was). Every status write of a VaultApp goes through it.
func (r *VaultAppReconciler) writeReport(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, rep report) error {
	rep.apply(app)
	if rep.note != "" && (rep.eventType == corev1.EventTypeNormal || !equality.Semantic.DeepEqual(before.Conditions, app.Status.Conditions)) {
		r.Recorder.Eventf(app, nil, rep.eventType, rep.reason, "Reconcile", "%s", rep.note)
	}
	return shared.UpdateStatus(ctx, r.Client, app, before, &app.Status)
}

// apply sets the report's conditions on the VaultApp.
func (r report) apply(app *vaultv1beta1.VaultApp) {
	shared.SetCondition(&app.Status.Conditions, app.Generation, vaultv1beta1.TypePolicySynced, r.policy.ok, r.policy.reason, r.policy.message)
	shared.SetCondition(&app.Status.Conditions, app.Generation, vaultv1beta1.TypeRoleSynced, r.role.ok, r.role.reason, r.role.message)
	shared.SetCondition(&app.Status.Conditions, app.Generation, vaultv1beta1.TypeReady, r.ready.ok, r.ready.reason, r.ready.message)
}
