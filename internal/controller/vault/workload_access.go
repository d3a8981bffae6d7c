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

package vault

import (
	"cmp"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// workloadAccess is what a workload of a VaultApp in namespace needs to
// log in as role to the Vault at where and read its secrets: app teams
// read it in the VaultApp's status, since they may not read the
// VaultServer. Nil where the server grants the namespace nothing (then
// nothing of that server is the team's to know), or where nothing is
// known of the server.
func workloadAccess(where Location, granted bool, namespace, role string) *vaultv1beta1.VaultAppAccess {
	if !granted || where.Address == "" {
		return nil
	}
	access := &vaultv1beta1.VaultAppAccess{
		Address:   where.Address,
		Namespace: where.Namespace,
		Role:      role,
		KVMount:   where.KVMount,
		KVPrefix:  vaultclient.KV{Mount: where.KVMount, Path: where.KVPath}.Prefix(namespace) + "/",
		Audience:  cmp.Or(where.AppAudience, where.KubernetesAudience),
	}
	if where.AppAuthMount != "" {
		access.LoginPath = "auth/" + where.AppAuthMount + "/login"
	}
	return access
}

// grantsNamespace reports whether a server grants a namespace anything:
// a VaultServer by its access entries; the environment's Vault (no Spec)
// is every namespace's, its annotations saying what each may do.
func (s *Destination) grantsNamespace(namespace string) bool {
	return s.Spec == nil || tenancy.VaultServerGrantsNamespace(s.Spec, namespace)
}
