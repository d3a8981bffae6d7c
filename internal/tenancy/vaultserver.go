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
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// VaultServerGrantsNamespace reports whether some access entry of the
// server lists the namespace: a VaultServer is used only by the namespaces
// its admin lists, as a KeycloakServer is.
func VaultServerGrantsNamespace(s *vaultv1beta1.VaultServer, namespace string) bool {
	return slices.ContainsFunc(s.Spec.Access, func(g vaultv1beta1.VaultAccessGrant) bool { return matchesAny(g.Namespaces, namespace) })
}

// VaultAccessFor are the server's access entries that list the namespace:
// together, its whole grant on that server.
func VaultAccessFor(s *vaultv1beta1.VaultServer, namespace string) []vaultv1beta1.VaultAccessGrant {
	var out []vaultv1beta1.VaultAccessGrant
	for _, g := range s.Spec.Access {
		if matchesAny(g.Namespaces, namespace) {
			out = append(out, g)
		}
	}
	return out
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

// UnknownVaultServer is the one answer, in a warning or a status, for a
// VaultServer a VaultApp names that does not exist, is being deleted or
// grants the namespace nothing: a tenant learns of no server she may not
// use. (A VaultApp that wrote to a server hears precisely what became of
// it: she knew that one.)
func UnknownVaultServer(name, namespace string) string {
	return fmt.Sprintf("VaultServer %q does not exist or grants namespace %q nothing: nothing is written to Vault until the cluster admin creates it or grants the namespace access in its spec.access",
		name, namespace)
}

// KVMountOf is the server's KV mount: secret when it names none.
func KVMountOf(s *vaultv1beta1.VaultServer) string {
	if s.Spec.KVMount == "" {
		return "secret"
	}
	return s.Spec.KVMount
}

// KVPathOf is the path each namespace owns in the server's KV mount,
// {cluster} rendered, {namespace} kept for the namespace.
func KVPathOf(s *vaultv1beta1.VaultServer) string {
	p := s.Spec.KVPath
	if p == "" {
		p = vaultv1beta1.DefaultKVPath
	}
	return renderCluster(s, p)
}

// KVOf is where the server keeps the namespaces' secrets.
func KVOf(s *vaultv1beta1.VaultServer) vaultclient.KV {
	return vaultclient.KV{Mount: KVMountOf(s), Path: KVPathOf(s)}
}

// renderCluster puts the server's cluster in the place of {cluster}: the
// webhook refuses {cluster} where spec.cluster is empty.
func renderCluster(s *vaultv1beta1.VaultServer, template string) string {
	return strings.ReplaceAll(template, vaultv1beta1.ClusterVariable, s.Spec.Cluster)
}

// kvDataPath is the Vault path a KV rule's grant is judged on: its data
// path. The metadata path that list and delete imply comes with it, as the
// namespace annotations always gave it.
func kvDataPath(s *vaultv1beta1.VaultServer, namespace, p string) string {
	return KVMountOf(s) + "/data/" + KVOf(s).Prefix(namespace) + "/" + p
}

// RetainGranted reports whether some access entry that lists the namespace
// lets it keep its policies after deletion.
func RetainGranted(s *vaultv1beta1.VaultServer, namespace string) bool {
	return slices.ContainsFunc(s.Spec.Access, func(g vaultv1beta1.VaultAccessGrant) bool {
		return g.AllowRetain && matchesAny(g.Namespaces, namespace)
	})
}

// DefaultTokenTTLOn is the token TTL a VaultApp that asks for none gets in
// namespace: the default, or the server's cap there when lower (a nil
// server, the environment's Vault, caps nothing). The webhook and the
// controller both default through it.
func DefaultTokenTTLOn(s *vaultv1beta1.VaultServer, namespace string) time.Duration {
	if s != nil {
		if most := MaxTokenTTLOf(s, namespace); most > 0 && most < vaultv1beta1.DefaultTokenTTL {
			return most
		}
	}
	return vaultv1beta1.DefaultTokenTTL
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
