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
	"k8s.io/apimachinery/pkg/api/meta"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
)

// legacyConfigurationMessage says what a VaultApp on the environment's
// Vault depends on, and what the admin does about it.
const legacyConfigurationMessage = "written to the Vault of the operator's environment (VAULT_ADDR) under its namespace's annotations; " +
	"a VaultServer with the same address, namespace, cluster, namePrefix, kvMount and appAuth takes it over with nothing rewritten in Vault " +
	"(docs/upgrading.md)"

// reportLegacyConfiguration keeps the LegacyConfiguration condition on a
// VaultApp written to the environment's Vault, and returns the text of a
// Warning Event when its message changes (recorded with the report): the
// admin sees which VaultApps still depend on the
// environment, and why one has not moved to its VaultServer yet. It does
// not change Ready: the VaultApp works.
func (r *pass) reportLegacyConfiguration() (warning string) {
	if r.server.Spec != nil {
		meta.RemoveStatusCondition(&r.app.Status.Conditions, vaultv1beta1.TypeLegacyConfiguration)
		return ""
	}
	msg := legacyConfigurationMessage
	if r.server.HeldBack != "" {
		msg += "; " + r.server.HeldBack
	}
	conditions.Set(&r.app.Status.Conditions, r.app.Generation, vaultv1beta1.TypeLegacyConfiguration, true, vaultv1beta1.ReasonLegacyConfiguration, msg)
	if c := meta.FindStatusCondition(r.before.Conditions, vaultv1beta1.TypeLegacyConfiguration); c == nil || c.Message != msg {
		return msg
	}
	return ""
}
