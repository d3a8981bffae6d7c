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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AllowedSecretTypesAnnotation, on a target Namespace, lists the Secret types
// other than Opaque that KeycloakClientCredentials may write into it,
// comma-separated. Without it, only Opaque.
const AllowedSecretTypesAnnotation = "secrets.carbogame.com/allowed-secret-types"

// neverWritten are Secret types that other controllers own (the token
// controller fills a ServiceAccount token Secret; bootstrap tokens join
// nodes): two writers would fight over one object, and a tenant could mint
// credentials, so no annotation allows them.
var neverWritten = []corev1.SecretType{corev1.SecretTypeServiceAccountToken, corev1.SecretTypeBootstrapToken}

// SecretTypeRefusal says why namespace ns refuses a target Secret of type t,
// or "" when it accepts it.
func SecretTypeRefusal(ns *corev1.Namespace, t corev1.SecretType) string {
	switch {
	case t == "" || t == corev1.SecretTypeOpaque:
		return ""
	case slices.Contains(neverWritten, t):
		return fmt.Sprintf("type %q is managed by Kubernetes itself and is never written by the operator", t)
	case !listNames(ns.Annotations[AllowedSecretTypesAnnotation], string(t)):
		allowed := ns.Annotations[AllowedSecretTypesAnnotation]
		if allowed == "" {
			allowed = "none"
		}
		return fmt.Sprintf("namespace %s does not allow Secrets of type %q: Opaque only, and the types its %s annotation lists (%s)",
			ns.Name, t, AllowedSecretTypesAnnotation, allowed)
	}
	return ""
}

// reservedDomains are the label and annotation prefixes a tenant may not
// set on a target Secret: Kubernetes' own, and the operator's (ownership
// marks, grants).
var reservedDomains = []string{"kubernetes.io", "k8s.io", "secrets.carbogame.com", "vault.exemple.com"}

// ReservedKey reports whether a label or annotation key belongs to
// Kubernetes or to the operator: its prefix is one of reservedDomains or a
// subdomain of one.
func ReservedKey(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	prefix = strings.ToLower(prefix)
	return slices.ContainsFunc(reservedDomains, func(d string) bool { return prefix == d || strings.HasSuffix(prefix, "."+d) })
}

// ValidateTargetMetadata refuses reserved keys among the labels and
// annotations a KeycloakClientCredential asks for on its Secrets.
func ValidateTargetMetadata(fld *field.Path, labels, annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range []struct {
		name string
		keys map[string]string
	}{{"labels", labels}, {"annotations", annotations}} {
		for _, k := range sortedKeys(m.keys) {
			if ReservedKey(k) {
				errs = append(errs, field.Forbidden(fld.Child(m.name).Key(k),
					"is reserved: keys under kubernetes.io/, k8s.io/ and the operator's own prefixes (secrets.carbogame.com/, vault.exemple.com/) are set only by Kubernetes and the operator"))
			}
		}
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// listNames reports whether the comma-separated list holds name exactly.
func listNames(list, name string) bool {
	for _, item := range strings.Split(list, ",") {
		if strings.TrimSpace(item) == name {
			return true
		}
	}
	return false
}
