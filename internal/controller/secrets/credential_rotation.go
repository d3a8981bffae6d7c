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

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// A rotation moves through phases recorded in status.rotation, so that a
// restart at any point goes on from where it stopped and repeats no step:
//
//	Regenerating  recorded (with Keycloak's creation time of the current
//	              secret) before Keycloak is asked for a new one; after a
//	              restart, a different creation time says it was done
//	Distributing  the new secret is written to every target; the previous
//	              one stays valid (and is written under the key the spec
//	              maps for it)
//	GracePeriod   every target holds the new secret; the previous one stays
//	              valid until graceEndsTime
//	Completed     the previous secret was invalidated
//
// A rotation that would cost logins (Keycloak keeps no previous secret, or
// not for long enough) does not start, unless the spec accepts downtime.

// rotationOutcome is what the rotation phase did: whether the client secret
// changed (and must be read again), a request refused, why a due rotation
// did not start or waits, and the steps taken (Events).
type rotationOutcome struct {
	fresh           bool
	rotationRefused *refusal
	// graceRefused says why a due rotation did not start; rotationWaits
	// why it waits for another one.
	graceRefused, rotationWaits string
	notices                     []notice
}

// rotate is the rotation phase of a pass: the consumers of a rotation in
// its grace period tended, then the step the namespace may take, in
// Keycloak; the other readers of a regenerated client told. Without a
// Keycloak client, only the consumers and a refused request are handled.
func (r *KeycloakClientCredentialReconciler) rotate(ctx context.Context, sc *scope) (rotationOutcome, *sourceError) {
	var out rotationOutcome
	if err := r.tendConsumers(ctx, sc.kcc, &out); err != nil {
		// Looked at again within consumerPoll (nextCheck): the wait for
		// the consumers has not begun.
		logf.FromContext(ctx).Info("the rotation's consumers could not be restarted yet", "error", err.Error())
	}
	step := r.allowedRotation(sc, &out)
	if sc.kcErr != nil {
		return out, classify(sc.kcErr, sc.server.Name)
	}
	fresh, err := r.rotateStep(ctx, sc.server, sc.kcc, sc.kc, step, &out)
	if err != nil {
		r.recent.forget(client.ObjectKeyFromObject(sc.kcc))
		return out, r.unavailable(sc, err)
	}
	if fresh {
		r.tellReadersOf(ctx, sc)
	}
	out.fresh = fresh
	return out, nil
}

// allowedRotation is the rotation step the pass may take. A rotation
// request counts only from a namespace that may rotate the client; from
// any other it is refused (in out), and handled: never retried. A rotation
// under way whose right was withdrawn since it began is abandoned: the
// right is checked again before each change in Keycloak.
func (r *KeycloakClientCredentialReconciler) allowedRotation(sc *scope, out *rotationOutcome) rotation {
	rotate := decideRotation(sc.kcc, r.now())
	why := ""
	if rotate.request != "" || rotate.acts() {
		why = tenancy.RotationRefusal(sc.server, sc.access, tenancy.LoginOf(sc.server, sc.login))
	}
	switch {
	case why == "":
	case rotate.request != "":
		out.rotationRefused = &refusal{request: rotate.request, message: why}
		rotate = rotation{}
	case rotate.acts():
		rotate = rotation{step: stepAbandon, why: why}
	}
	return rotate
}

// tellReadersOf tells the other readers of a client whose secret this pass
// regenerated: they forget the old secret before they are queued, here and
// in the other shards.
func (r *KeycloakClientCredentialReconciler) tellReadersOf(ctx context.Context, sc *scope) {
	r.recent.forgetClient(sc.server.UID, sc.src.Realm, sc.src.ClientID)
	r.queueReadersOf(ctx, sc.kcc)
	if r.Rotations != nil {
		r.Rotations.publish(ctx, sc.server, sc.src.Realm, sc.src.ClientID, r.now())
	}
}

// rotateStep takes the rotation's step in Keycloak; fresh says the client
// secret changed and must be read again. Every call uses the source as the
// pass checked it: the Regenerating patch is refused (a conflict) if the
// resource changed since.
func (r *KeycloakClientCredentialReconciler) rotateStep(ctx context.Context, server *secretsv1beta1.KeycloakServer, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI, rot rotation, out *rotationOutcome) (fresh bool, err error) {
	src := kcc.Spec.Source
	switch rot.step {
	case stepStart:
		return r.startRotation(ctx, server, kcc, kc, rot, out)
	case stepRegenerate:
		state, err := kc.SecretState(ctx, src.Realm, src.ClientID)
		if err != nil {
			return false, err
		}
		if state.Created != kcc.Status.Rotation.PreviousSecretCreated {
			// Regenerated before the restart: recorded, not done again.
			return true, r.regenerated(ctx, kcc, src, state, out)
		}
		return true, r.regenerate(ctx, kcc, kc, src, out)
	case stepInvalidate:
		if err := r.invalidate(ctx, kcc, kc, src, out); err != nil {
			return false, err
		}
		if n, late := timeOutConsumers(kcc, kcc.Status.Rotation); late {
			out.notices = append(out.notices, n)
		}
		r.releaseClaim(ctx, server, src.Realm, src.ClientID, kcc.UID)
	case stepAbandon:
		st := kcc.Status.Rotation
		completed(kcc, r.now())
		out.notices = append(out.notices, notice{corev1.EventTypeWarning, secretsv1beta1.ReasonRotationAbandoned,
			fmt.Sprintf("the rotation stops here: %s; Keycloak keeps the previous secret until its own expiry", rot.why)})
		if st.Server == src.ServerRef.Name {
			r.releaseClaim(ctx, server, st.Realm, st.ClientID, kcc.UID)
		}
	}
	return false, nil
}
