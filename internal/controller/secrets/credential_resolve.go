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

// The first phase of a pass: who asks what of which server, checked
// against the server's grants before anything is asked of Keycloak.

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// scope is what the phases of one pass over a credential work with.
type scope struct {
	kcc *secretsv1beta1.KeycloakClientCredential
	// before is the status as the pass found it.
	before *secretsv1beta1.KeycloakClientCredentialStatus
	server *secretsv1beta1.KeycloakServer
	// kc is the server's Keycloak client; kcErr why there is none (the
	// rotation's consumers are still tended then).
	kc    KeycloakAPI
	kcErr error
	// access is what the namespace asks of the server, login the client
	// the operator logs in with (known once kc is).
	access tenancy.KeycloakRequest
	login  string
	// src is the source as the pass checked it: a rotation step's status
	// patch reads the resource back as stored, a spec changed meanwhile
	// included.
	src secretsv1beta1.CredentialSource
}

// resolve finds the credential's server and Keycloak client and checks
// the request against the server's grants, with the login client the
// server really uses (known from its credentials Secret). A refusal comes
// before any word about the server's credentials: a namespace without the
// grant learns nothing of them.
func (r *KeycloakClientCredentialReconciler) resolve(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) (*scope, *sourceError) {
	server, serr := r.sourceServer(ctx, kcc)
	if serr != nil {
		return nil, serr
	}
	sc := &scope{kcc: kcc, before: before, server: server, access: tenancy.AccessRequestOf(kcc), src: kcc.Spec.Source}
	sc.kc, sc.kcErr = r.Clients.Client(ctx, server)
	if sc.kcErr == nil {
		sc.login = sc.kc.LoginClientID()
	}
	if errs := tenancy.CheckKeycloakAccess(server, sc.access, tenancy.LoginOf(server, sc.login)); len(errs) > 0 {
		return nil, notGranted(errs)
	}
	return sc, nil
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
