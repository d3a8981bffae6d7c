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

// The last phase of a pass: when the resource is looked at again.

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// next is when the resource is looked at again: at once with backoff after
// a failure worth retrying, else at its refresh. A secret served from
// memory (a repair) keeps the refresh it was read for; a secret just read
// serves until the refresh scheduled now.
func (r *KeycloakClientCredentialReconciler) next(req ctrl.Request, kcc *secretsv1beta1.KeycloakClientCredential, out outcome) (ctrl.Result, error) {
	switch {
	case out.source != nil && out.source.retry:
		return ctrl.Result{}, out.source.err
	case out.source != nil:
		return r.refresh.After(req, tenancy.CredentialRefreshInterval(kcc)), nil
	case out.retry != nil:
		return ctrl.Result{}, out.retry
	case out.serves > 0:
		return r.refresh.After(req, max(time.Second, min(r.nextCheck(kcc), r.consumersPoll(kcc), out.serves))), nil
	}
	check := max(time.Second, r.nextCheck(kcc))
	if poll := r.consumersPoll(kcc); poll < check {
		// The secret just read serves until the check, not the poll: a
		// rollout followed every few seconds costs Keycloak nothing.
		r.recent.serveUntil(req.NamespacedName, r.now().Add(check))
		return r.refresh.After(req, poll), nil
	}
	res := r.refresh.After(req, check)
	r.recent.serveUntil(req.NamespacedName, r.now().Add(res.RequeueAfter))
	return res, nil
}

// consumersPoll is how soon the rotation's consumers need a look: every
// consumerPoll while they are to be restarted or followed; never else.
func (r *KeycloakClientCredentialReconciler) consumersPoll(kcc *secretsv1beta1.KeycloakClientCredential) time.Duration {
	rot := kcc.Status.Rotation
	never := time.Duration(1<<63 - 1)
	switch {
	case rot == nil || consumersOf(kcc) == nil:
		return never
	case rot.Phase == secretsv1beta1.RotationGracePeriod && consumersPending(kcc, rot, r.now()):
		return consumerPoll
	case rot.Phase == secretsv1beta1.RotationCompleted && !rot.WithGrace && rot.ConsumersDeadline == nil &&
		rot.CompletedTime != nil && r.now().Sub(rot.CompletedTime.Time) < noGraceRestartWindow:
		return consumerPoll
	}
	return never
}

// nextCheck is the refresh interval, or sooner when a rotation is due (or
// a rotation request waits for the gap after the last one, or a grace
// period ends). While a rotation is under way, a due one or a request
// waits for it; a rotation refused for want of a grace period is tried
// again at the refresh, and one waiting for another resource's in 30 s.
func (r *KeycloakClientCredentialReconciler) nextCheck(kcc *secretsv1beta1.KeycloakClientCredential) time.Duration {
	next := tenancy.CredentialRefreshInterval(kcc)
	soon := func(at time.Time) { next = min(next, max(time.Second, at.Sub(r.now()))) }
	if rot := inProgress(kcc); rot != nil {
		if rot.Phase == secretsv1beta1.RotationGracePeriod && rot.GraceEndsTime != nil {
			soon(rot.GraceEndsTime.Time)
		}
		return next
	}
	ready := meta.FindStatusCondition(kcc.Status.Conditions, secretsv1beta1.TypeRotationReady)
	switch {
	case ready != nil && ready.Reason == secretsv1beta1.ReasonGraceUnavailable:
	case ready != nil && ready.Reason == secretsv1beta1.ReasonRotationWaiting:
		next = min(next, 30*time.Second)
	default:
		if due, ok := kcc.RotationDueAt(); ok {
			soon(due)
		}
		if kcc.PendingRotation() != "" {
			soon(kcc.RotationRequestAllowedAt())
		}
	}
	return next
}
