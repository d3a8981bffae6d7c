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

// Package vkoctl is kubectl vko: what an app team or an on-call admin asks
// of the operator without reading conditions, namespace grants and servers
// by hand. Each command reads the cluster as the user running it (their
// kubeconfig, their rights) and decides with the operator's own rules
// (internal/tenancy, the controllers' Desired and TargetShapes), so what it
// says is what the webhook and the controller would do.
package vkoctl

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// Kind is one of the operator's kinds, as a user may name it.
type Kind struct {
	Name       string
	Namespaced bool
	new        func() client.Object
}

// The kinds' names, as the API says them.
const (
	kindVaultApp   = "VaultApp"
	kindCredential = "KeycloakClientCredential"
)

// kinds are the names kubectl knows each kind by: plural, singular and the
// CRD's short name (kept equal by TestAliasesAreTheCRDsNames).
var kinds = []struct {
	names []string
	kind  Kind
}{
	{[]string{"vaultapp", "vaultapps", "vapp"}, Kind{kindVaultApp, true, func() client.Object { return &vaultv1beta1.VaultApp{} }}},
	{[]string{"keycloakclientcredential", "keycloakclientcredentials", "kcc"}, Kind{kindCredential, true, func() client.Object { return &secretsv1beta1.KeycloakClientCredential{} }}},
	{[]string{"vaultserver", "vaultservers", "vsrv"}, Kind{"VaultServer", false, func() client.Object { return &vaultv1beta1.VaultServer{} }}},
	{[]string{"keycloakserver", "keycloakservers", "kcs"}, Kind{"KeycloakServer", false, func() client.Object { return &secretsv1beta1.KeycloakServer{} }}},
}

// ParseRef reads KIND/NAME (vaultapp/shop-api, kcc/gitea, vsrv/central, ...;
// a group suffix such as vaultapp.vault.exemple.com is accepted).
func ParseRef(ref string) (Kind, string, error) {
	k, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return Kind{}, "", fmt.Errorf("%q: want KIND/NAME, for example vaultapp/shop-api or kcc/gitea", ref)
	}
	k, _, _ = strings.Cut(strings.ToLower(k), ".")
	for _, entry := range kinds {
		for _, n := range entry.names {
			if n == k {
				return entry.kind, name, nil
			}
		}
	}
	return Kind{}, "", fmt.Errorf("%q: not a kind of the operator's (vaultapp, kcc, vaultserver, keycloakserver)", k)
}

// key is where an object of the kind lives.
func (k Kind) key(namespace, name string) client.ObjectKey {
	if !k.Namespaced {
		namespace = ""
	}
	return client.ObjectKey{Namespace: namespace, Name: name}
}
