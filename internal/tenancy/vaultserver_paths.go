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

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// Paths outside the KV prefix (spec.policy.vaultPaths): each within a
// template of the VaultServer's spec.access, rendered for the namespace.

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
			out = append(out, pathGrant{strings.ReplaceAll(renderCluster(s, p.Template), vaultv1beta1.NamespaceVariable, namespace), p.Capabilities})
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
