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
	"k8s.io/apimachinery/pkg/api/equality"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// grant is what of a VaultApp's spec its server grants, and so what is
// written to Vault (tenancy.DecideVaultGrant).
type grant struct{ tenancy.VaultGrant }

func (g grant) empty() bool { return len(g.Rules) == 0 && len(g.Paths) == 0 }

// narrows reports whether the grant holds less than the spec asks.
func (g grant) narrows(app *vaultv1beta1.VaultApp) bool {
	return !equality.Semantic.DeepEqual(g.Rules, app.Spec.Policy.Rules) ||
		len(g.Paths) != len(app.Spec.Policy.VaultPaths) || (len(g.Paths) > 0 && !equality.Semantic.DeepEqual(g.Paths, app.Spec.Policy.VaultPaths)) ||
		g.TokenTTL < tenancy.TokenTTL(app)
}

// Desired is what a VaultApp's policy and role are in Vault under its
// grant: the policy's text (its mark naming owner) and the role. The
// controller writes them; kubectl vko render shows them before the
// VaultApp exists.
func Desired(app *vaultv1beta1.VaultApp, kv vaultclient.KV, policyName string, owner vaultclient.Owner, g tenancy.VaultGrant) (string, vaultclient.Role) {
	policy := vaultclient.RenderPolicy(kv, owner, grant{g}.vaultRules())
	return policy, vaultclient.Role{
		ServiceAccounts: app.Spec.KubernetesAuth.ServiceAccounts,
		Namespace:       app.Namespace,
		Policies:        []string{policyName},
		TTL:             g.TokenTTL,
		MaxTTL:          g.MaxTokenTTL,
	}
}

// vaultRules are the grant in the Vault client's terms.
func (g grant) vaultRules() []vaultclient.Rule {
	rules := make([]vaultclient.Rule, 0, len(g.Rules)+len(g.Paths))
	for _, r := range g.Rules {
		rules = append(rules, vaultclient.Rule{Path: r.Path, Capabilities: capabilities(r.Capabilities)})
	}
	for _, p := range g.Paths {
		rules = append(rules, vaultclient.Rule{Path: p.Path, Capabilities: capabilities(p.Capabilities), Absolute: true})
	}
	return rules
}

func capabilities(caps []vaultv1beta1.Capability) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = string(c)
	}
	return out
}
