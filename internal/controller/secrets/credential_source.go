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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// What a KeycloakClientCredential reads from Keycloak: the grants are
// checked before every call, and a due rotation happens first.

// sourced is what source had: the Secret data, how long a remembered
// secret still serves (zero when just read), and the requests it handled.
type sourced struct {
	data            map[string][]byte
	serves          time.Duration
	refreshed       string
	rotationRefused *refusal
	// graceRefused says why a due rotation did not start; rotationWaits
	// why it waits for another one.
	graceRefused, rotationWaits string
	// notices are the rotation's steps taken in this pass.
	notices []notice
}

// source returns the Secret data of the client, from Keycloak (or as read
// from it before its refresh is due: see recentSecrets, unless a refresh
// request asks for Keycloak now).
func (r *KeycloakClientCredentialReconciler) source(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (sourced, *sourceError) {
	server, serr := r.sourceServer(ctx, kcc)
	if serr != nil {
		return sourced{}, serr
	}
	// The grants are checked before anything is asked of Keycloak, with
	// the login client the server really uses (known from its credentials
	// Secret). A refusal comes before any word about the server's
	// credentials: a namespace without the grant learns nothing of them.
	kc, kcErr := r.Clients.Client(ctx, server)
	login := ""
	if kcErr == nil {
		login = kc.LoginClientID()
	}
	access := tenancy.AccessRequestOf(kcc)
	if errs := tenancy.CheckKeycloakAccess(server, access, tenancy.LoginOf(server, login)); len(errs) > 0 {
		return sourced{}, notGranted(errs)
	}
	var out sourced
	if err := r.tendConsumers(ctx, kcc, &out); err != nil {
		// Looked at again within consumerPoll (nextCheck): the wait for
		// the consumers has not begun.
		logf.FromContext(ctx).Info("the rotation's consumers could not be restarted yet", "error", err.Error())
	}
	rotate := r.allowedRotation(kcc, server, access, login, &out)
	if kcErr != nil {
		return out, classify(kcErr, server.Name)
	}
	// A server that does not answer is waited for: the resource is
	// reconciled as soon as it answers again, whatever its backoff.
	failed := func(err error) *sourceError {
		e := classify(err, server.Name)
		if e.reason == secretsv1beta1.ReasonKeycloakUnavailable && r.Outage != nil {
			r.Outage.Hold(keycloakService(server), kc.Reachable, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(kcc)})
		}
		return e
	}
	// The client as the pass began: a rotation step's status patch reads
	// the resource back as stored, a spec changed meanwhile included.
	src := kcc.Spec.Source
	fresh, err := r.rotateStep(ctx, server, kcc, kc, rotate, &out)
	if err != nil {
		r.recent.forget(client.ObjectKeyFromObject(kcc))
		return out, failed(err)
	}
	if fresh {
		r.tellReadersOf(ctx, server, kcc, src)
	}
	if err := r.readSource(ctx, kcc, src, server, kc, fresh, &out); err != nil {
		return out, failed(err)
	}
	return out, nil
}

// sourceServer is the credential's KeycloakServer, once its spec passes
// the webhook's rules (it was down, or the object predates a rule: such a
// spec is not acted on).
func (r *KeycloakClientCredentialReconciler) sourceServer(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (*secretsv1beta1.KeycloakServer, *sourceError) {
	if errs := append(tenancy.ValidateKeycloakClientCredential(kcc), crdschema.Validate(kcc)...); len(errs) > 0 {
		return nil, &sourceError{reason: secretsv1beta1.ReasonNotAllowed, err: errs.ToAggregate()}
	}
	var server secretsv1beta1.KeycloakServer
	name := kcc.Spec.Source.ServerRef.Name
	if err := r.Get(ctx, client.ObjectKey{Name: name}, &server); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &sourceError{reason: secretsv1beta1.ReasonServerNotFound, err: errors.New(tenancy.UnknownKeycloakServer(name, kcc.Namespace))}
		}
		return nil, &sourceError{reason: secretsv1beta1.ReasonKeycloakError, err: err, retry: true}
	}
	return &server, nil
}

// allowedRotation is the rotation step the pass may take. A rotation
// request counts only from a namespace that may rotate the client; from
// any other it is refused (in out), and handled: never retried. A rotation
// under way whose right was withdrawn since it began is abandoned: the
// right is checked again before each change in Keycloak.
func (r *KeycloakClientCredentialReconciler) allowedRotation(kcc *secretsv1beta1.KeycloakClientCredential, server *secretsv1beta1.KeycloakServer, access tenancy.KeycloakRequest, login string, out *sourced) rotation {
	rotate := decideRotation(kcc, r.now())
	why := ""
	if rotate.request != "" || rotate.acts() {
		why = tenancy.RotationRefusal(server, access, tenancy.LoginOf(server, login))
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
func (r *KeycloakClientCredentialReconciler) tellReadersOf(ctx context.Context, server *secretsv1beta1.KeycloakServer, kcc *secretsv1beta1.KeycloakClientCredential, src secretsv1beta1.CredentialSource) {
	r.recent.forgetClient(server.UID, src.Realm, src.ClientID)
	r.queueReadersOf(ctx, kcc)
	if r.Rotations != nil {
		r.Rotations.publish(ctx, server, src.Realm, src.ClientID, r.now())
	}
}

// readSource sets the data of the target Secrets in out: from the secret
// read in the last refresh while it serves (a repair costs Keycloak
// nothing), else, and after a regeneration or on a refresh request, read
// from Keycloak now.
func (r *KeycloakClientCredentialReconciler) readSource(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, src secretsv1beta1.CredentialSource, server *secretsv1beta1.KeycloakServer, kc KeycloakAPI, fresh bool, out *sourced) error {
	key := client.ObjectKeyFromObject(kcc)
	out.refreshed = kcc.PendingRefresh()
	read := recentSource{uid: kcc.UID, generation: kcc.Generation, serverUID: server.UID, serverGeneration: server.Generation, realm: src.Realm, clientID: src.ClientID}
	cred, serves, remembered := r.recent.get(key, read, r.now())
	if !remembered || fresh || out.refreshed != "" {
		serves = 0
		var err error
		if cred, err = readCredential(ctx, kcc, kc); err != nil {
			r.recent.forget(key)
			return err
		}
		r.recent.put(key, read, cred, r.now().Add(tenancy.CredentialRefreshInterval(kcc)))
	}
	out.data, out.serves = desiredData(kcc, cred, kc.IssuerURL(src.Realm), kc.TokenURL(src.Realm)), serves
	return nil
}

// notGranted is a request outside the server's grants. It is not retried:
// a change of the resource or of its server (both watched) brings the next
// attempt. The Secrets already written stay as they are. A server that
// grants the namespace nothing answers as one that does not exist.
func notGranted(errs field.ErrorList) *sourceError {
	if errs[0].Field == tenancy.ServerRefField.String() {
		return &sourceError{reason: secretsv1beta1.ReasonServerNotFound, err: errors.New(errs[0].Detail)}
	}
	return &sourceError{reason: secretsv1beta1.ReasonAccessNotGranted, err: errs.ToAggregate()}
}

// classify gives a failure of server's Keycloak its reason. Every one of
// them is retried with capped backoff: each is mended outside what the
// operator watches (in Keycloak, or in the credentials Secret, which is not
// cached), so no event would announce the fix.
func classify(err error, server string) *sourceError {
	reason := secretsv1beta1.ReasonKeycloakError
	switch {
	case keycloak.Forbidden(err):
		reason = secretsv1beta1.ReasonOperatorForbidden
		err = fmt.Errorf("the operator's own request was refused by Keycloak: the client in KeycloakServer %s's credentials lacks a realm-management role of the realm "+
			"(view-clients to read a client's secret; manage-clients and view-realm to rotate it), which the cluster admin grants: %w", server, err)
	case errors.Is(err, errCredentials):
		reason = secretsv1beta1.ReasonCredentialsInvalid
	case errors.Is(err, keycloak.ErrUnauthorized):
		reason = secretsv1beta1.ReasonUnauthorized
	case errors.Is(err, keycloak.ErrClientNotFound):
		reason = secretsv1beta1.ReasonClientNotFound
	case errors.Is(err, keycloak.ErrNoUsableSecret):
		reason = secretsv1beta1.ReasonNoUsableSecret
	case keycloak.Unavailable(err):
		reason = secretsv1beta1.ReasonKeycloakUnavailable
		err = fmt.Errorf("the Keycloak server does not answer; retried as soon as it does: %w", err)
	}
	return &sourceError{reason: reason, err: err, retry: true}
}

// keycloakService names a KeycloakServer in the Outage.
func keycloakService(server *secretsv1beta1.KeycloakServer) string {
	return "keycloak/" + server.Name
}
