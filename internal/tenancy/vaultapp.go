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

// Package tenancy holds the rules that keep one namespace inside what the
// cluster admin granted it. The admission webhooks reject what breaks them,
// and the controllers check them again before they act, since a webhook can
// be bypassed (failurePolicy, objects that predate it).
package tenancy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// AllowedCapabilitiesAnnotation, on a Namespace, lists the Vault capabilities
// its VaultApps may use, comma-separated. Without it: read and list.
const AllowedCapabilitiesAnnotation = "vault.exemple.com/allowed-capabilities"

// DefaultCapabilities are what a namespace may use when the admin said nothing.
var DefaultCapabilities = []vaultv1beta1.Capability{vaultv1beta1.CapabilityRead, vaultv1beta1.CapabilityList}

// grantable are the capabilities an admin can grant at all: never sudo,
// root or deny, whatever the annotation says.
var grantable = []vaultv1beta1.Capability{
	vaultv1beta1.CapabilityCreate, vaultv1beta1.CapabilityRead, vaultv1beta1.CapabilityUpdate,
	vaultv1beta1.CapabilityPatch, vaultv1beta1.CapabilityDelete, vaultv1beta1.CapabilityList,
}

// AllowedCapabilities returns what the namespace's annotation grants. Words
// that are not grantable capabilities are ignored.
func AllowedCapabilities(ns *corev1.Namespace) []vaultv1beta1.Capability {
	value, ok := ns.Annotations[AllowedCapabilitiesAnnotation]
	if !ok {
		return slices.Clone(DefaultCapabilities)
	}
	var out []vaultv1beta1.Capability
	for _, word := range strings.Split(value, ",") {
		c := vaultv1beta1.Capability(strings.TrimSpace(word))
		if slices.Contains(grantable, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// pathPattern: the characters a KV path may hold, with the Vault globs "+"
// (one segment) and a trailing "*".
var pathPattern = regexp.MustCompile(`^[A-Za-z0-9_.+*-]+(/[A-Za-z0-9_.+*-]+)*/?$`)

// TokenTTL is the TTL of the tokens the VaultApp's role issues (its spec's,
// defaulted: vaultv1beta1.SetDefaults).
func TokenTTL(app *vaultv1beta1.VaultApp) time.Duration {
	if ttl := app.Spec.KubernetesAuth.TokenTTL; ttl != nil {
		return ttl.Duration
	}
	return vaultv1beta1.DefaultTokenTTL
}

// VaultRefreshInterval is how often Vault is checked for drift: the spec's,
// defaulted, and never more often than the bound (an object the webhook did
// not see may ask less).
func VaultRefreshInterval(app *vaultv1beta1.VaultApp) time.Duration {
	if ri := app.Spec.RefreshInterval; ri != nil {
		return max(ri.Duration, vaultv1beta1.MinRefreshInterval)
	}
	return vaultv1beta1.DefaultRefreshInterval
}

// AllowRetainAnnotation, set to "true" on a Namespace, lets its VaultApps
// use deletionPolicy Retain. Without it a VaultApp's policy and role always
// go with it: keeping Vault grants past the object's life is the cluster
// admin's decision, not the tenant's.
const AllowRetainAnnotation = "vault.exemple.com/allow-retain"

// RetainAllowed reports whether the namespace lets VaultApps keep their
// Vault objects after deletion.
func RetainAllowed(ns *corev1.Namespace) bool {
	return ns.Annotations[AllowRetainAnnotation] == "true"
}

// ValidateVaultApp checks the rules that need nothing but the VaultApp.
// Each error names the field and the rule it breaks.
func ValidateVaultApp(app *vaultv1beta1.VaultApp) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")

	rules := spec.Child("policy", "rules")
	for i, r := range app.Spec.Policy.Rules {
		errs = append(errs, validatePath(rules.Index(i).Child("path"), r.Path)...)
	}
	sas := spec.Child("kubernetesAuth", "serviceAccounts")
	for i, sa := range app.Spec.KubernetesAuth.ServiceAccounts {
		for _, msg := range validation.IsDNS1123Subdomain(sa) {
			errs = append(errs, field.Invalid(sas.Index(i), sa, "must be a ServiceAccount name: "+msg))
		}
	}
	if ttl := app.Spec.KubernetesAuth.TokenTTL; ttl != nil && (ttl.Duration < vaultv1beta1.MinTokenTTL || ttl.Duration > vaultv1beta1.MaxTokenTTL) {
		errs = append(errs, field.Invalid(spec.Child("kubernetesAuth", "tokenTTL"), ttl.Duration.String(),
			fmt.Sprintf("must be between %s and %s", vaultv1beta1.MinTokenTTL, vaultv1beta1.MaxTokenTTL)))
	}
	if ri := app.Spec.RefreshInterval; ri != nil && ri.Duration < vaultv1beta1.MinRefreshInterval {
		errs = append(errs, field.Invalid(spec.Child("refreshInterval"), ri.Duration.String(),
			fmt.Sprintf("must be at least %s", vaultv1beta1.MinRefreshInterval)))
	}
	// The policy and role are named app.<namespace>.<name>, kept to 128
	// characters (149 with the longest cluster name prefix) so that they
	// stay readable in Vault's audit logs.
	if n := len(PolicyName("", app.Namespace, app.Name)); n > 128 {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), len(app.Name), 128-len(PolicyName("", app.Namespace, ""))))
	}
	return errs
}

// CheckVaultGrants checks a VaultApp against what its namespace was
// granted: the capabilities (AllowedCapabilitiesAnnotation) and Retain
// (AllowRetainAnnotation).
func CheckVaultGrants(app *vaultv1beta1.VaultApp, ns *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	allowed := AllowedCapabilities(ns)
	rules := field.NewPath("spec", "policy", "rules")
	for i, r := range app.Spec.Policy.Rules {
		if refused := refusedCapabilities(r.Capabilities, allowed); len(refused) > 0 {
			errs = append(errs, field.Forbidden(rules.Index(i).Child("capabilities"),
				fmt.Sprintf("%s not allowed in namespace %q: it may use %s (the cluster admin sets this in the namespace's %s annotation)",
					join(refused), app.Namespace, join(allowed), AllowedCapabilitiesAnnotation)))
		}
	}
	if app.Spec.DeletionPolicy == vaultv1beta1.DeletionPolicyRetain && !RetainAllowed(ns) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "deletionPolicy"),
			fmt.Sprintf("Retain not allowed in namespace %q: the cluster admin allows it with the namespace annotation %s=true", app.Namespace, AllowRetainAnnotation)))
	}
	return errs
}

// GrantedRules are the VaultApp's rules cut down to what the namespace may
// use: capabilities not granted are dropped, and a rule left with none is
// dropped. When the admin narrows a grant, this is what stays live in Vault.
func GrantedRules(app *vaultv1beta1.VaultApp, ns *corev1.Namespace) []vaultv1beta1.PolicyRule {
	allowed := AllowedCapabilities(ns)
	var out []vaultv1beta1.PolicyRule
	for _, r := range app.Spec.Policy.Rules {
		if caps := keep(r.Capabilities, allowed); len(caps) > 0 {
			out = append(out, vaultv1beta1.PolicyRule{Path: r.Path, Capabilities: caps})
		}
	}
	return out
}

func refusedCapabilities(asked, allowed []vaultv1beta1.Capability) []vaultv1beta1.Capability {
	var refused []vaultv1beta1.Capability
	for _, c := range asked {
		if !slices.Contains(allowed, c) && !slices.Contains(refused, c) {
			refused = append(refused, c)
		}
	}
	return refused
}

// validatePath keeps a rule's path inside the namespace's own prefix.
func validatePath(fld *field.Path, p string) field.ErrorList {
	switch {
	case strings.HasPrefix(p, "/"):
		return field.ErrorList{field.Invalid(fld, p, "must be relative to the namespace's prefix: no leading \"/\"")}
	case slices.Contains(strings.Split(p, "/"), ".."), slices.Contains(strings.Split(p, "/"), "."):
		return field.ErrorList{field.Invalid(fld, p, "must stay inside the namespace's prefix: no \".\" or \"..\" segment")}
	case strings.Contains(strings.TrimSuffix(p, "*"), "*"):
		return field.ErrorList{field.Invalid(fld, p, "may use \"*\" only as its last character (Vault's glob)")}
	case !pathPattern.MatchString(p):
		return field.ErrorList{field.Invalid(fld, p, "may hold only letters, digits, \"_\", \".\", \"-\", \"+\" and \"*\", in segments separated by single \"/\"")}
	}
	return nil
}

// PolicyName is the name of the Vault policy and role of a VaultApp:
// app.<namespace>.<name>, or app-<prefix>.<namespace>.<name> in a cluster
// given a name prefix (several clusters on one Vault, the same VaultApp in
// each). A dot, not a dash, separates namespace and name: namespace names
// cannot hold a dot, so no two VaultApps of different namespaces can share
// a name (with dashes, a/b-c and a-b/c would both be app-a-b-c, and one
// namespace could overwrite another's policy). The prefix follows a dash:
// no unprefixed name starts with app-, so no namespace of an unprefixed
// cluster can take a prefixed cluster's names, and an operator confined to
// app-<prefix>.* in Vault reaches no other cluster's.
func PolicyName(prefix, namespace, name string) string {
	if prefix == "" {
		return "app." + namespace + "." + name
	}
	return "app-" + prefix + "." + namespace + "." + name
}

// IsPolicyNameOf reports whether policy is the name of the VaultApp
// namespace/name under any prefix, or none: a name the operator may have
// given it before its cluster's prefix changed.
func IsPolicyNameOf(policy, namespace, name string) bool {
	if policy == PolicyName("", namespace, name) {
		return true
	}
	rest, ok := strings.CutPrefix(policy, "app-")
	if !ok {
		return false
	}
	prefix, ok := strings.CutSuffix(rest, "."+namespace+"."+name)
	return ok && ValidateNamePrefix(prefix) == nil
}

// MaxNamePrefix is the longest name prefix: the names a prefix lengthens
// stay readable in Vault's audit logs (128 characters without it).
const MaxNamePrefix = 20

// ValidateNamePrefix checks a cluster's name prefix: a DNS label (no dot,
// so that names stay unambiguous) of at most MaxNamePrefix characters.
func ValidateNamePrefix(prefix string) error {
	if msgs := validation.IsDNS1123Label(prefix); len(msgs) > 0 {
		return fmt.Errorf("name prefix %q must be a DNS label: %s", prefix, strings.Join(msgs, "; "))
	}
	if len(prefix) > MaxNamePrefix {
		return fmt.Errorf("name prefix %q must be at most %d characters", prefix, MaxNamePrefix)
	}
	return nil
}

func join(caps []vaultv1beta1.Capability) string {
	if len(caps) == 0 {
		return "no capability"
	}
	words := make([]string, len(caps))
	for i, c := range caps {
		words[i] = string(c)
	}
	return strings.Join(words, ", ")
}
