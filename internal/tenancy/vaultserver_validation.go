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
	errs = append(errs, validateKVPath(spec.Child("kvPath"), s.Spec.KVPath)...)
	if s.Spec.Cluster == "" && strings.Contains(s.Spec.KVPath, vaultv1beta1.ClusterVariable) {
		errs = append(errs, field.Required(spec.Child("cluster"), "spec.kvPath uses {cluster}: name the cluster"))
	}
	access := spec.Child("access")
	for i, g := range s.Spec.Access {
		for j, ns := range g.Namespaces {
			errs = append(errs, ValidatePattern(access.Index(i).Child("namespaces").Index(j), ns)...)
		}
		for j, p := range g.Paths {
			fld := access.Index(i).Child("paths").Index(j).Child("template")
			errs = append(errs, ValidatePathTemplate(fld, p.Template)...)
			if s.Spec.Cluster == "" && strings.Contains(p.Template, vaultv1beta1.ClusterVariable) {
				errs = append(errs, field.Required(spec.Child("cluster"), fmt.Sprintf("%s uses {cluster}: name the cluster", fld)))
			}
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
	withoutVar := strings.NewReplacer(vaultv1beta1.NamespaceVariable, "", vaultv1beta1.ClusterVariable, "").Replace(t)
	mount, _, hasPath := strings.Cut(t, "/")
	switch {
	case strings.HasPrefix(t, "/"):
		return field.ErrorList{field.Invalid(fld, t, "must start with a mount, not \"/\"")}
	case !templatePattern.MatchString(t):
		return field.ErrorList{field.Invalid(fld, t, "may hold only letters, digits, \"_\", \".\", \"@\", \"-\", {namespace} and {cluster}, in segments separated by single \"/\", and \"*\" only as its last character")}
	case strings.ContainsAny(withoutVar, "{}"):
		return field.ErrorList{field.Invalid(fld, t, "may use only the variables {namespace} and {cluster}")}
	case !hasPath || strings.ContainsAny(mount, "*{"):
		return field.ErrorList{field.Invalid(fld, t, "must start with a mount's literal name and a \"/\" (no glob or variable in the mount)")}
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
			case strings.Contains(p.Template, vaultv1beta1.ClusterVariable) && !clusterAlone(p.Template):
				out = append(out, fmt.Sprintf("%s %q: {cluster} shares its segment with other text, so one cluster's path can be another's; keep {cluster} a segment of its own (…/{cluster}/…)", fld, p.Template))
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

// validateKVPath checks the path each namespace owns in the KV mount:
// {namespace} once, a segment of its own (else one namespace's path is a
// prefix of another's), {cluster} at most once and also alone in its
// segment, literal segments otherwise ("." and ".." would leave the path).
func validateKVPath(fld *field.Path, p string) field.ErrorList {
	if p == "" {
		return nil
	}
	segments := strings.Split(p, "/")
	count := func(v string) int {
		n := 0
		for _, seg := range segments {
			if seg == v {
				n++
			}
		}
		return n
	}
	for _, seg := range segments {
		literal := !strings.ContainsAny(seg, "{}")
		if seg == "" || seg == "." || seg == ".." || (!literal && seg != vaultv1beta1.NamespaceVariable && seg != vaultv1beta1.ClusterVariable) {
			return field.ErrorList{field.Invalid(fld, p, "must be segments separated by single \"/\", each a literal name, {namespace} or {cluster} alone (no \".\" or \"..\")")}
		}
	}
	switch {
	case count(vaultv1beta1.NamespaceVariable) != 1:
		return field.ErrorList{field.Invalid(fld, p, "must hold {namespace} once, as a segment of its own: each namespace owns its path")}
	case count(vaultv1beta1.ClusterVariable) > 1:
		return field.ErrorList{field.Invalid(fld, p, "may hold {cluster} once")}
	}
	return nil
}

// clusterAlone reports whether every {cluster} of a template is a segment
// of its own.
func clusterAlone(template string) bool {
	for _, seg := range strings.Split(template, "/") {
		if strings.Contains(seg, vaultv1beta1.ClusterVariable) && seg != vaultv1beta1.ClusterVariable {
			return false
		}
	}
	return true
}
