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
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Two clusters without a name prefix write the same policy names. The one
// that holds a name keeps it; the other's VaultApp says
// HeldByAnotherCluster and asks for the name in its registration. Vault
// resolves a token's policies by name at each request, so a token the
// holder's role issued keeps working, with whatever rules the policy holds,
// until it expires: once the holder's VaultApp goes and the other cluster
// takes the name, with the other cluster's rules. While a name is asked
// for, the holder writes its role with tokens that live at most
// vaultv1beta1.ContestedTokenTTL, renewals included, and says so.

// appsOnServer is what a check reads of this cluster's VaultApps on a
// server: how many wrote there, the policies they hold (in step there),
// and those they ask for that another cluster holds.
type appsOnServer struct {
	count        int32
	held, wanted []string
}

// appsOn reads this cluster's VaultApps on a server, in one listing (the
// count from the tally, where there is one).
func (r *VaultServerReconciler) appsOn(ctx context.Context, server string) (*appsOnServer, error) {
	var mine appsOnServer
	err := r.everyVaultApp().Each(ctx, func(a *vaultv1beta1.VaultApp) {
		if a.Status.Server != server {
			return
		}
		mine.count++
		c := meta.FindStatusCondition(a.Status.Conditions, vaultv1beta1.TypePolicySynced)
		switch {
		case a.Status.PolicyName == "" || c == nil:
		case c.Status == metav1.ConditionTrue:
			mine.held = append(mine.held, a.Status.PolicyName)
		case c.Reason == vaultv1beta1.ReasonHeldByAnotherCluster:
			mine.wanted = append(mine.wanted, a.Status.PolicyName)
		}
	})
	if err != nil {
		return nil, err
	}
	if n, ok := r.tally.Count(server); ok {
		mine.count = n
	}
	return &mine, nil
}

// contestedPolicies are the policies this cluster holds that another
// cluster's registration asks for (pure); at most MaxWants, sorted.
func contestedPolicies(id string, held []string, others []vaultclient.Registration) []string {
	var out []string
	for _, o := range others {
		if o.ID == id {
			continue // this cluster, under a former name
		}
		for _, name := range o.Wants {
			if slices.Contains(held, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), vaultclient.MaxWants)]
}

// contested reports whether the VaultApp's policy is asked for by another
// cluster, as its server's status says.
func (r *pass) contested() bool {
	return r.server.Spec != nil && slices.Contains(r.server.Spec.Status.ContestedPolicies, r.name)
}

// boundContested shortens the tokens of a contested policy's role.
func boundContested(role vaultclient.Role) vaultclient.Role {
	role.TTL = min(role.TTL, vaultv1beta1.ContestedTokenTTL)
	if role.MaxTTL == 0 || role.MaxTTL > vaultv1beta1.ContestedTokenTTL {
		role.MaxTTL = vaultv1beta1.ContestedTokenTTL
	}
	return role
}

// contestedNote is what the role's condition adds while the name is
// contested.
func contestedNote(name string) string {
	return fmt.Sprintf("; its tokens live at most %s, renewals included, while a VaultApp of another cluster asks for policy %s too", vaultv1beta1.ContestedTokenTTL, name)
}

// removedContestedNote is what the Event of a contested policy's removal
// adds: how long the tokens issued before keep working, and with whose rules.
func removedContestedNote(name string) string {
	return fmt.Sprintf("; a VaultApp of another cluster asks for policy %s: a token the role issued keeps working, with the rules that cluster writes there next, until it expires (at most %s after its login for tokens issued since the name was asked for; earlier ones at their own max TTL)",
		name, vaultv1beta1.ContestedTokenTTL)
}
