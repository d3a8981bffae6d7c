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

package tenancy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// LegacyNamespaceGrantsAnnotation, set to "true" on a KeycloakServer, keeps
// the behaviour of releases before spec.access: every namespace listed in
// spec.allowedNamespaces may read any client of any realm (never a protected
// one, and never rotate). It exists for the upgrade only; the
// KeycloakServer reports a Warning while it is in effect.
const LegacyNamespaceGrantsAnnotation = "secrets.carbogame.com/legacy-namespace-grants"

// protectedClients exist in every realm and hold (or hand out) admin rights:
// reading their secret, or rotating it, is never granted.
var protectedClients = []string{"admin-cli", "security-admin-console", "realm-management", "broker"}

// realmPattern is a plain realm name: letters, digits, ".", "_" and "-",
// starting and ending with a letter or digit. Keycloak accepts more, but a
// realm in a URL path must not be able to reach another realm or endpoint.
var realmPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,253}[A-Za-z0-9])?$`)

// ValidateRealm checks that realm is a plain realm name.
func ValidateRealm(fld *field.Path, realm string) field.ErrorList {
	if !realmPattern.MatchString(realm) || strings.Contains(realm, "..") {
		return field.ErrorList{field.Invalid(fld, realm,
			"must be a plain realm name: letters, digits, \".\", \"_\" and \"-\", starting and ending with a letter or digit, at most 255 characters")}
	}
	return nil
}

// KeycloakRequest is what a KeycloakClientCredential asks of a server.
type KeycloakRequest struct {
	Namespace string
	Realm     string
	ClientID  string
	Rotate    bool
}

// MasterRealm is Keycloak's admin realm, and the login realm by default.
const MasterRealm = keycloak.DefaultRealm

// LoginOf is the server's own login, with clientID the client it logs in
// with ("" when not known; a password login always uses admin-cli).
func LoginOf(server *secretsv1beta1.KeycloakServer, clientID string) Login {
	login := Login{Realm: server.Spec.Realm, ClientID: clientID}
	if login.Realm == "" {
		login.Realm = MasterRealm
	}
	if server.Spec.AuthType == secretsv1beta1.AuthPassword {
		login.ClientID = "admin-cli"
	}
	return login
}

// Login is the server's own login: its realm and the client it logs in
// with (admin-cli for a password login). Those are never granted.
type Login struct {
	Realm    string
	ClientID string
}

// Paths of the fields a refusal names, in the KeycloakClientCredential.
// ServerRefField is the one a refusal names when the server grants the
// namespace nothing at all.
var (
	realmField     = field.NewPath("spec", "source", "realm")
	clientIDField  = field.NewPath("spec", "source", "clientId")
	rotationField  = field.NewPath("spec", "rotation")
	ServerRefField = field.NewPath("spec", "source", "serverRef", "name")
)

// KeycloakAccessInput is what a credential's access is decided on: the
// server, the request, and the server's own login when known (the webhook
// may not know the client; the controller always does).
type KeycloakAccessInput struct {
	Server  *secretsv1beta1.KeycloakServer
	Request KeycloakRequest
	Login   Login
}

// KeycloakAccess is what a KeycloakServer lets a namespace read or rotate.
// Every rule is final: a request is granted whole or not at all.
var KeycloakAccess = Chain[KeycloakAccessInput]{
	{Name: "the realm is a plain realm name", Final: true,
		Refuse: func(in KeycloakAccessInput) field.ErrorList { return ValidateRealm(realmField, in.Request.Realm) }},
	{Name: "a grant covers the namespace, realm, client and rotation", Final: true,
		Refuse: func(in KeycloakAccessInput) field.ErrorList { return checkGrants(in.Server, in.Request) }},
	// Only a request the grants cover hears that its client is protected:
	// anyone else would learn the operator's login client by guessing.
	{Name: "the client is not protected", Final: true, Refuse: refuseProtected},
}

// CheckKeycloakAccess reports what of req the server's grants refuse; nil
// when everything asked is granted (the KeycloakAccess chain).
func CheckKeycloakAccess(server *secretsv1beta1.KeycloakServer, req KeycloakRequest, login Login) field.ErrorList {
	return KeycloakAccess.Evaluate(KeycloakAccessInput{Server: server, Request: req, Login: login}).Refused
}

func refuseProtected(in KeycloakAccessInput) field.ErrorList {
	req := in.Request
	if reason := protectedReason(req, in.Login); reason != "" {
		return field.ErrorList{field.Forbidden(clientIDField, fmt.Sprintf("client %q in realm %q %s: it is never readable or rotatable through a KeycloakClientCredential",
			req.ClientID, req.Realm, reason))}
	}
	return nil
}

// checkGrants reports what of req the server's grants do not cover.
func checkGrants(server *secretsv1beta1.KeycloakServer, req KeycloakRequest) field.ErrorList {
	grants := EffectiveGrants(server)
	var forNamespace, forRealm []int
	for i, g := range grants {
		if !matchesAny(g.Namespaces, req.Namespace) {
			continue
		}
		forNamespace = append(forNamespace, i)
		if !matchesAny(g.Realms, req.Realm) {
			continue
		}
		forRealm = append(forRealm, i)
		if !matchesAny(g.ClientIDs, req.ClientID) {
			continue
		}
		if !req.Rotate || g.Rotate {
			return nil
		}
	}
	switch {
	case len(forNamespace) == 0:
		return field.ErrorList{field.Forbidden(ServerRefField, UnknownKeycloakServer(server.Name, req.Namespace))}
	case len(forRealm) == 0:
		return field.ErrorList{field.Forbidden(realmField, fmt.Sprintf("realm %q is not granted to namespace %q by KeycloakServer %q: its grants for this namespace allow realms %s",
			req.Realm, req.Namespace, server.Name, describe(grants, forNamespace, func(g secretsv1beta1.AccessGrant) []string { return g.Realms })))}
	}
	readable := slices.ContainsFunc(forRealm, func(i int) bool { return matchesAny(grants[i].ClientIDs, req.ClientID) })
	if !readable {
		return field.ErrorList{field.Forbidden(clientIDField, fmt.Sprintf("client %q in realm %q is not granted to namespace %q by KeycloakServer %q: its grants allow clientIds %s",
			req.ClientID, req.Realm, req.Namespace, server.Name, describe(grants, forRealm, func(g secretsv1beta1.AccessGrant) []string { return g.ClientIDs })))}
	}
	return field.ErrorList{field.Forbidden(rotationField, fmt.Sprintf("rotating client %q is not granted to namespace %q by KeycloakServer %q: no grant that covers it sets rotate: true",
		req.ClientID, req.Namespace, server.Name))}
}

// UnknownKeycloakServer is the one answer, in a refusal, a warning or a
// status, for a KeycloakServer that does not exist and for one that grants
// the namespace nothing: a tenant learns of no server she may not use.
func UnknownKeycloakServer(name, namespace string) string {
	return fmt.Sprintf("KeycloakServer %q does not exist or grants namespace %q nothing: nothing is synced until the cluster admin creates it or grants the namespace access in its spec.access",
		name, namespace)
}

// protectedReason says why a client is protected, or "" if it is not.
func protectedReason(req KeycloakRequest, login Login) string {
	switch {
	case slices.Contains(protectedClients, req.ClientID):
		return "is one of Keycloak's admin clients"
	// Realms compare without case: Keycloak on a case-insensitive database
	// resolves "MASTER" to master, and a protection must not hinge on it.
	case login.ClientID != "" && strings.EqualFold(req.Realm, login.Realm) && req.ClientID == login.ClientID:
		return "is the operator's own login client"
	case (strings.EqualFold(req.Realm, login.Realm) || strings.EqualFold(req.Realm, MasterRealm)) && strings.HasSuffix(req.ClientID, "-realm"):
		// In the master (and the login) realm, <realm>-realm clients hold
		// the admin roles over each realm.
		return "is an admin client of the " + req.Realm + " realm"
	}
	return ""
}
