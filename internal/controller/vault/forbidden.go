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
	"fmt"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// operatorForbidden says who must act when Vault refuses the operator's own
// request: the Vault admin, on the policy of the role the operator logs in
// with (the VaultServer's spec.login, which the admin reads there), not the
// app team, whose VaultApp asked nothing its grant does not cover. The
// message, which the team reads, names no role or mount of the operator's.
func operatorForbidden(server *vaultv1beta1.VaultServer, err error) string {
	who := "the operator's Vault token (the environment's Vault)"
	if server != nil {
		who = fmt.Sprintf("the role VaultServer %s's spec.login logs in with", server.Name)
	}
	return fmt.Sprintf("Vault refused the operator's own request: the Vault admin must let the policies of %s do it (docs/admin-setup.md, Vault): %v", who, err)
}
