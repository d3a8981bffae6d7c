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

// Why a pass could not have the client secret, and who must act.

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// sourceError is a failure to obtain the client secret, with its reason.
type sourceError struct {
	reason string
	err    error
	// retry: retried with backoff; otherwise the resource waits for a
	// change of what the operator watches (itself, its server).
	retry bool
}

func (e *sourceError) Error() string { return e.err.Error() }

// unavailable is a failure of Keycloak during the pass, with its reason.
// A server that does not answer is waited for: the resource is reconciled
// as soon as it answers again, whatever its backoff.
func (r *KeycloakClientCredentialReconciler) unavailable(sc *scope, err error) *sourceError {
	e := classify(err, sc.server.Name)
	if e.reason == secretsv1beta1.ReasonKeycloakUnavailable && r.Outage != nil && sc.kc != nil {
		r.Outage.Hold(keycloakService(sc.server), sc.kc.Reachable, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(sc.kcc)})
	}
	return e
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
