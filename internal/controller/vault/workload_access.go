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
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// workloadAccess is what a workload of a VaultApp in namespace needs to
// log in to server's Vault as role and read its secrets: app teams read it
// in the VaultApp's status, since they may not read the VaultServer. Nil
// for the environment's Vault (server nil), which has no such record, and
// where the server grants the namespace nothing: then nothing of that
// server is the team's to know.
func workloadAccess(server *vaultv1beta1.VaultServer, namespace, role string) *vaultv1beta1.VaultAppAccess {
	if server == nil || !tenancy.VaultServerGrantsNamespace(server, namespace) {
		return nil
	}
	access := &vaultv1beta1.VaultAppAccess{
		Address:   server.Spec.Address,
		Namespace: server.Spec.Namespace,
		Role:      role,
		KVMount:   tenancy.KVMountOf(server),
		KVPrefix:  namespace + "/",
	}
	switch auth := server.Spec.AppAuth; {
	case auth.JWT != nil:
		access.LoginPath = "auth/" + auth.JWT.Mount + "/login"
		access.Audience = auth.JWT.Audience
	case auth.Kubernetes != nil:
		access.LoginPath = "auth/" + auth.Kubernetes.Mount + "/login"
	}
	return access
}
