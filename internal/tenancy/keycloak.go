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
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AllowedSourceNamespacesAnnotation, on a Namespace, lists the namespaces
// whose KeycloakClientCredentials may write Secrets into it, comma-separated;
// "*" allows every namespace. A namespace always consents to its own.
const AllowedSourceNamespacesAnnotation = "secrets.carbogame.com/allowed-source-namespaces"

// ConsentsTo reports whether target accepts Secrets from resources in source.
func ConsentsTo(target *corev1.Namespace, source string) bool {
	if target.Name == source {
		return true
	}
	return listAllows(target.Annotations[AllowedSourceNamespacesAnnotation], source)
}

func listAllows(list, name string) bool {
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "*" || item == name {
			return true
		}
	}
	return false
}
