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
	"crypto/x509"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// The rules a VaultServer's own spec must keep, and the warnings it gets.

// reservedMounts are the Vault paths no grant may reach: the system
// backend, auth methods (roles and their bindings) and identity (entities,
// groups and their policies). A template under them would let a tenant
// change who may do what in Vault.
var reservedMounts = []string{"sys", "auth", "identity"}

// templatePattern: path segments of letters, digits and _ . @ - with
// {namespace} in them, and Vault's glob * only at the end. Vault's
// one-segment wildcard + is not admitted: it could stand for sys.
var templatePattern = regexp.MustCompile(`^[A-Za-z0-9_.@{}-]+(/[A-Za-z0-9_.@{}-]+)*/?\*?$`)

// ValidateVaultServer checks what the schema cannot: the CA, the URL, and
// each grant's namespaces, path templates and token TTL.
func ValidateVaultServer(s *vaultv1beta1.VaultServer) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if u, err := url.Parse(s.Spec.Address); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, field.Invalid(spec.Child("address"), s.Spec.Address, "must be an absolute http or https URL, such as https://vault.example.com:8200"))
	} else if u.User != nil {
		// Shown in status, Events and kubectl get: never a credential.
		errs = append(errs, field.Invalid(spec.Child("address"), "(redacted)", "must not hold a user or password"))
	}
	if len(s.Spec.CABundle) > 0 && s.Spec.CASecretRef != nil {
		errs = append(errs, field.Forbidden(spec.Child("caSecretRef"), "set caBundle or caSecretRef, not both"))
	}
	if len(s.Spec.CABundle) > 0 && !x509.NewCertPool().AppendCertsFromPEM(s.Spec.CABundle) {
		errs = append(errs, field.Invalid(spec.Child("caBundle"), "(PEM)", "must hold at least one PEM-encoded certificate"))
	}
	access := spec.Child("access")
	for i, g := range s.Spec.Access {
		for j, ns := range g.Namespaces {
			errs = append(errs, ValidatePattern(access.Index(i).Child("namespaces").Index(j), ns)...)
		}
		for j, p := range g.Paths {
			errs = append(errs, ValidatePathTemplate(access.Index(i).Child("paths").Index(j).Child("template"), p.Template)...)
		}
		if ttl := g.MaxTokenTTL; ttl != nil && (ttl.Duration < vaultv1beta1.MinTokenTTL || ttl.Duration > vaultv1beta1.MaxTokenTTL) {
			errs = append(errs, field.Invalid(access.Index(i).Child("maxTokenTTL"), ttl.Duration.String(),
				fmt.Sprintf("must be between %s and %s", vaultv1beta1.MinTokenTTL, vaultv1beta1.MaxTokenTTL)))
		}
	}
	return errs
}

// ValidatePathTemplate refuses a template that could reach what no
// namespace may be granted: Vault's sys/, auth/ and identity/ paths (in any
// segment: in Vault Enterprise and OpenBao, team/sys/ is a child
// namespace's), a mount that is not a literal name (a glob or {namespace}
// there could stand for sys), a path that leaves its own segments, or a
// variable other than {namespace}.
func ValidatePathTemplate(fld *field.Path, t string) field.ErrorList {
	segments := strings.Split(strings.TrimSuffix(t, "*"), "/")
	withoutVar := strings.ReplaceAll(t, vaultv1beta1.NamespaceVariable, "")
	mount, _, hasPath := strings.Cut(t, "/")
	switch {
	case strings.HasPrefix(t, "/"):
		return field.ErrorList{field.Invalid(fld, t, "must start with a mount, not \"/\"")}
	case !templatePattern.MatchString(t):
		return field.ErrorList{field.Invalid(fld, t, "may hold only letters, digits, \"_\", \".\", \"@\", \"-\" and {namespace}, in segments separated by single \"/\", and \"*\" only as its last character")}
	case strings.ContainsAny(withoutVar, "{}"):
		return field.ErrorList{field.Invalid(fld, t, "may use only the variable {namespace}")}
	case !hasPath || strings.ContainsAny(mount, "*{"):
		return field.ErrorList{field.Invalid(fld, t, "must start with a mount's literal name and a \"/\" (no glob or {namespace} in the mount)")}
	case slices.Contains(segments, ".") || slices.Contains(segments, ".."):
		return field.ErrorList{field.Invalid(fld, t, "must not hold a \".\" or \"..\" segment")}
	}
	for _, seg := range segments {
		if slices.Contains(reservedMounts, strings.ToLower(seg)) {
			return field.ErrorList{field.Forbidden(fld, fmt.Sprintf("paths under %s/ are never granted to namespaces: they change who may do what in Vault", seg))}
		}
	}
	return nil
}

// VaultServerWarnings says what an admissible grant does that the admin
// may not mean: a path shared by every namespace granted, or {namespace}
// sharing its segment with other text, so that one namespace's path can be
// another's (database/creds/{namespace}-* gives namespace a the creds of
// a-b; database/creds/{namespace}-ro gives a the path that
// database/creds/{namespace} gives a-ro).
func VaultServerWarnings(s *vaultv1beta1.VaultServer) []string {
	var out []string
	for i, g := range s.Spec.Access {
		for j, p := range g.Paths {
			fld := fmt.Sprintf("spec.access[%d].paths[%d].template", i, j)
			before, after, found := strings.Cut(p.Template, vaultv1beta1.NamespaceVariable)
			rest, _, _ := strings.Cut(after, "/")
			lead := before[strings.LastIndex(before, "/")+1:]
			switch {
			case !found:
				out = append(out, fmt.Sprintf("%s %q has no {namespace}: every namespace granted shares the same paths", fld, p.Template))
			case rest != "" || lead != "":
				out = append(out, fmt.Sprintf("%s %q: {namespace} shares its segment with %q, so one namespace's path can be another's (namespace a reaches what belongs to namespaces named a…); keep {namespace} a segment of its own (…/{namespace}/…) to keep namespaces apart",
					fld, p.Template, lead+rest))
			}
		}
		for j, ns := range g.Namespaces {
			if ns == "*" {
				out = append(out, fmt.Sprintf("spec.access[%d].namespaces[%d] is \"*\": every namespace, present and future, gets this grant", i, j))
			}
		}
	}
	return out
}
