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
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

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

// VaultServerGrantsNamespace reports whether some access entry of the
// server lists the namespace: a VaultServer is used only by the namespaces
// its admin lists, as a KeycloakServer is.
func VaultServerGrantsNamespace(s *vaultv1beta1.VaultServer, namespace string) bool {
	return slices.ContainsFunc(s.Spec.Access, func(g vaultv1beta1.VaultAccessGrant) bool { return matchesAny(g.Namespaces, namespace) })
}

// CheckVaultServerGrant refuses a VaultApp the server's grants do not
// list the namespace of.
func CheckVaultServerGrant(app *vaultv1beta1.VaultApp, s *vaultv1beta1.VaultServer) field.ErrorList {
	if VaultServerGrantsNamespace(s, app.Namespace) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "serverRef", "name"),
		fmt.Sprintf("VaultServer %q grants namespace %q nothing: the cluster admin lists the namespaces that may use it in its spec.access", s.Name, app.Namespace))}
}

// ValidateVaultPath checks a path a VaultApp asks outside its KV prefix by
// the rules of a template (ValidatePathTemplate), with no variable.
func ValidateVaultPath(fld *field.Path, p string) field.ErrorList {
	if strings.ContainsAny(p, "{}") {
		return field.ErrorList{field.Invalid(fld, p, "must be a path, with no variable")}
	}
	return ValidatePathTemplate(fld, p)
}

// pathGrant is a template rendered for one namespace.
type pathGrant struct {
	path         string
	capabilities []vaultv1beta1.Capability
}

// covers reports whether the grant reaches the whole of path: the same
// path, or one under a grant ending in Vault's glob.
func (g pathGrant) covers(path string) bool {
	prefix, glob := strings.CutSuffix(g.path, "*")
	if !glob {
		return path == g.path
	}
	return strings.HasPrefix(strings.TrimSuffix(path, "*"), prefix)
}

// pathGrants are a server's templates rendered for the namespace.
func pathGrants(s *vaultv1beta1.VaultServer, namespace string) []pathGrant {
	var out []pathGrant
	for _, g := range s.Spec.Access {
		if !matchesAny(g.Namespaces, namespace) {
			continue
		}
		for _, p := range g.Paths {
			out = append(out, pathGrant{strings.ReplaceAll(p.Template, vaultv1beta1.NamespaceVariable, namespace), p.Capabilities})
		}
	}
	return out
}

// grantedCapabilities are the capabilities the grants give on path.
func grantedCapabilities(grants []pathGrant, path string) []vaultv1beta1.Capability {
	var out []vaultv1beta1.Capability
	for _, g := range grants {
		if g.covers(path) {
			for _, c := range g.capabilities {
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// CheckVaultPaths refuses each path a VaultApp asks that its server (nil:
// the environment's Vault, which grants none) does not grant the
// namespace, naming the field and what is granted.
func CheckVaultPaths(app *vaultv1beta1.VaultApp, s *vaultv1beta1.VaultServer) field.ErrorList {
	var errs field.ErrorList
	fld := field.NewPath("spec", "policy", "vaultPaths")
	var grants []pathGrant
	if s != nil {
		grants = pathGrants(s, app.Namespace)
	}
	if len(app.Spec.Policy.VaultPaths) > 0 && app.Spec.DeletionPolicy == vaultv1beta1.DeletionPolicyRetain {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "deletionPolicy"),
			"Retain does not keep a policy with vaultPaths: a retained policy is never revisited, and its VaultServer's grants must be able to shrink it"))
	}
	for i, p := range app.Spec.Policy.VaultPaths {
		if verrs := ValidateVaultPath(fld.Index(i).Child("path"), p.Path); len(verrs) > 0 {
			errs = append(errs, verrs...)
			continue
		}
		if s == nil {
			errs = append(errs, field.Forbidden(fld.Index(i).Child("path"), "only a VaultServer's spec.access grants paths outside the namespace's KV prefix: name one in spec.serverRef"))
			continue
		}
		granted := grantedCapabilities(grants, p.Path)
		if refused := refusedCapabilities(p.Capabilities, granted); len(refused) > 0 {
			errs = append(errs, field.Forbidden(fld.Index(i), fmt.Sprintf("%s on %q not granted to namespace %q by VaultServer %q: %s",
				join(refused), p.Path, app.Namespace, s.Name, describePathGrants(grants))))
		}
	}
	return errs
}

// GrantedVaultPaths are the VaultApp's paths cut down to what its server
// grants the namespace: what stays live when the admin narrows a grant.
func GrantedVaultPaths(app *vaultv1beta1.VaultApp, s *vaultv1beta1.VaultServer) []vaultv1beta1.VaultPathRule {
	if s == nil {
		return nil
	}
	grants := pathGrants(s, app.Namespace)
	var out []vaultv1beta1.VaultPathRule
	for _, p := range app.Spec.Policy.VaultPaths {
		if len(ValidateVaultPath(field.NewPath("p"), p.Path)) > 0 {
			continue
		}
		caps := keep(p.Capabilities, grantedCapabilities(grants, p.Path))
		if len(caps) > 0 {
			out = append(out, vaultv1beta1.VaultPathRule{Path: p.Path, Capabilities: caps})
		}
	}
	return out
}

func describePathGrants(grants []pathGrant) string {
	if len(grants) == 0 {
		return "its spec.access grants this namespace no path"
	}
	parts := make([]string, len(grants))
	for i, g := range grants {
		parts[i] = fmt.Sprintf("%s on %s", join(g.capabilities), g.path)
	}
	return "it grants " + strings.Join(parts, "; ")
}

// KVMountOf is the server's KV mount: secret when it names none.
func KVMountOf(s *vaultv1beta1.VaultServer) string {
	if s.Spec.KVMount == "" {
		return "secret"
	}
	return s.Spec.KVMount
}

// kvDataPath is the Vault path a KV rule's grant is judged on: its data
// path. The metadata path that list and delete imply comes with it, as the
// namespace annotations always gave it.
func kvDataPath(s *vaultv1beta1.VaultServer, namespace, p string) string {
	return KVMountOf(s) + "/data/" + namespace + "/" + p
}

// RetainGranted reports whether some access entry that lists the namespace
// lets it keep its policies after deletion.
func RetainGranted(s *vaultv1beta1.VaultServer, namespace string) bool {
	return slices.ContainsFunc(s.Spec.Access, func(g vaultv1beta1.VaultAccessGrant) bool {
		return g.AllowRetain && matchesAny(g.Namespaces, namespace)
	})
}

// MaxTokenTTLOf is the largest token TTL the server's entries that list
// the namespace allow: entries grant, so the most generous wins, and an
// entry without maxTokenTTL allows up to vaultv1beta1.MaxTokenTTL. Zero when no entry
// lists the namespace.
func MaxTokenTTLOf(s *vaultv1beta1.VaultServer, namespace string) time.Duration {
	var largest time.Duration
	for _, g := range s.Spec.Access {
		if !matchesAny(g.Namespaces, namespace) {
			continue
		}
		ttl := vaultv1beta1.MaxTokenTTL
		if g.MaxTokenTTL != nil {
			ttl = g.MaxTokenTTL.Duration
		}
		largest = max(largest, ttl)
	}
	return largest
}

// CheckVaultServerAccess refuses what of a VaultApp its VaultServer's
// access entries do not grant its namespace: each KV rule's capabilities,
// Retain, and a token TTL over the entries' largest. (vaultPaths are
// CheckVaultPaths'; whether the server lists the namespace at all is
// CheckVaultServerGrant's.) A VaultServer's grants replace the namespace
// annotations, which only the operator's environment Vault reads.
func CheckVaultServerAccess(app *vaultv1beta1.VaultApp, s *vaultv1beta1.VaultServer) field.ErrorList {
	var errs field.ErrorList
	grants := pathGrants(s, app.Namespace)
	rules := field.NewPath("spec", "policy", "rules")
	for i, r := range app.Spec.Policy.Rules {
		p := kvDataPath(s, app.Namespace, r.Path)
		if refused := refusedCapabilities(r.Capabilities, grantedCapabilities(grants, p)); len(refused) > 0 {
			errs = append(errs, field.Forbidden(rules.Index(i).Child("capabilities"), fmt.Sprintf("%s on %q (%s) not granted to namespace %q by VaultServer %q: %s",
				join(refused), r.Path, p, app.Namespace, s.Name, describePathGrants(grants))))
		}
	}
	if app.Spec.DeletionPolicy == vaultv1beta1.DeletionPolicyRetain && !RetainGranted(s, app.Namespace) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "deletionPolicy"),
			fmt.Sprintf("Retain not allowed in namespace %q by VaultServer %q: the cluster admin allows it with allowRetain in an entry of its spec.access that lists the namespace", app.Namespace, s.Name)))
	}
	if most := MaxTokenTTLOf(s, app.Namespace); most > 0 && TokenTTL(app) > most {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "kubernetesAuth", "tokenTTL"),
			fmt.Sprintf("%s is over the %s VaultServer %q allows namespace %q (maxTokenTTL in its spec.access)", TokenTTL(app), most, s.Name, app.Namespace)))
	}
	return errs
}

// GrantedKVRules are the VaultApp's KV rules cut down to what its
// VaultServer grants the namespace.
func GrantedKVRules(app *vaultv1beta1.VaultApp, s *vaultv1beta1.VaultServer) []vaultv1beta1.PolicyRule {
	grants := pathGrants(s, app.Namespace)
	var out []vaultv1beta1.PolicyRule
	for _, r := range app.Spec.Policy.Rules {
		if caps := keep(r.Capabilities, grantedCapabilities(grants, kvDataPath(s, app.Namespace, r.Path))); len(caps) > 0 {
			out = append(out, vaultv1beta1.PolicyRule{Path: r.Path, Capabilities: caps})
		}
	}
	return out
}

// GrantedTokenTTL is the VaultApp's token TTL cut down to the largest its
// VaultServer allows the namespace.
func GrantedTokenTTL(app *vaultv1beta1.VaultApp, s *vaultv1beta1.VaultServer) time.Duration {
	if most := MaxTokenTTLOf(s, app.Namespace); most > 0 && TokenTTL(app) > most {
		return most
	}
	return TokenTTL(app)
}

// keep are the asked capabilities that are granted, in the asked order.
func keep(asked, granted []vaultv1beta1.Capability) []vaultv1beta1.Capability {
	var out []vaultv1beta1.Capability
	for _, c := range asked {
		if slices.Contains(granted, c) {
			out = append(out, c)
		}
	}
	return out
}
