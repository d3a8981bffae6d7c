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
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// EffectiveGrants are the server's grants, with the legacy namespace list
// turned into a read-only grant of everything when the admin opted in.
func EffectiveGrants(server *secretsv1beta1.KeycloakServer) []secretsv1beta1.AccessGrant {
	grants := server.Spec.Access
	if LegacyGrantsInEffect(server) {
		grants = append(slices.Clone(grants), secretsv1beta1.AccessGrant{
			Namespaces: server.Spec.AllowedNamespaces, Realms: []string{"*"}, ClientIDs: []string{"*"},
		})
	}
	return grants
}

// LegacyGrantsInEffect reports whether spec.allowedNamespaces still grants
// read access (the admin opted in, for the upgrade).
func LegacyGrantsInEffect(server *secretsv1beta1.KeycloakServer) bool {
	return server.Annotations[LegacyNamespaceGrantsAnnotation] == "true" && len(server.Spec.AllowedNamespaces) > 0
}

// GrantsNamespace reports whether any grant of the server names namespace:
// the cheap check that decides whether a namespace may use the server at all.
func GrantsNamespace(server *secretsv1beta1.KeycloakServer, namespace string) bool {
	return slices.ContainsFunc(EffectiveGrants(server), func(g secretsv1beta1.AccessGrant) bool { return matchesAny(g.Namespaces, namespace) })
}

// KeycloakAccessFor are the server's grants (legacy ones included) that
// list the namespace.
func KeycloakAccessFor(server *secretsv1beta1.KeycloakServer, namespace string) []secretsv1beta1.AccessGrant {
	var out []secretsv1beta1.AccessGrant
	for _, g := range EffectiveGrants(server) {
		if matchesAny(g.Namespaces, namespace) {
			out = append(out, g)
		}
	}
	return out
}

// BroadGrantWarnings name the grants that reach every client of the master
// or login realm: the protected clients stay out of reach, but any other
// client there that holds admin roles (another operator's login, an old
// login client) does not. A warning, since the admin may mean it.
func BroadGrantWarnings(server *secretsv1beta1.KeycloakServer) []string {
	login := LoginOf(server, "")
	var out []string
	for i, g := range server.Spec.Access {
		for _, realm := range []string{MasterRealm, login.Realm} {
			if matchesAny(g.Realms, realm) && slices.Contains(g.ClientIDs, "*") && !slices.Contains(out, fmt.Sprint(i)) {
				out = append(out, fmt.Sprint(i))
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("spec.access[%s] grant(s) every client of the master or login realm: any client there with admin roles becomes readable (only Keycloak's own admin clients and this server's login client are protected)",
		strings.Join(out, ","))}
}

// ValidatePattern checks one entry of a grant list: an exact name, a prefix
// followed by one "*", or "*" alone.
func ValidatePattern(fld *field.Path, p string) field.ErrorList {
	if p == "" || strings.Contains(strings.TrimSuffix(p, "*"), "*") {
		return field.ErrorList{field.Invalid(fld, p, "must be an exact name, a prefix followed by \"*\" (such as \"team-a-*\"), or \"*\" alone")}
	}
	return nil
}

// matchesAny reports whether name matches one of the patterns.
func matchesAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			return strings.HasPrefix(name, prefix)
		}
		return p == name
	})
}

// describe lists what the grants at indexes allow, for a refusal message.
func describe(grants []secretsv1beta1.AccessGrant, indexes []int, list func(secretsv1beta1.AccessGrant) []string) string {
	var out []string
	for _, i := range indexes {
		for _, p := range list(grants[i]) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return strings.Join(out, ", ")
}

// AccessRequestOf is what a KeycloakClientCredential asks of its server.
func AccessRequestOf(kcc *secretsv1beta1.KeycloakClientCredential) KeycloakRequest {
	return KeycloakRequest{
		Namespace: kcc.Namespace,
		Realm:     kcc.Spec.Source.Realm,
		ClientID:  kcc.Spec.Source.ClientID,
		Rotate:    kcc.Spec.Rotation != nil,
	}
}

// RotationRefusal says why the namespace of req may not regenerate the
// client's secret (a rotation request made by annotation), "" when it may.
func RotationRefusal(server *secretsv1beta1.KeycloakServer, req KeycloakRequest, login Login) string {
	req.Rotate = true
	errs := CheckKeycloakAccess(server, req, login)
	why := make([]string, 0, len(errs))
	for _, e := range errs {
		why = append(why, e.Detail)
	}
	return strings.Join(why, "; ")
}
