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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

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
// server: how many wrote there, the policies they hold (written there and
// not found held by someone else since), and those they ask for that
// another cluster holds.
type appsOnServer struct {
	count  int32
	held   map[string]bool
	wanted []string
}

// appsOn reads this cluster's VaultApps on a server, in one listing (the
// count from the tally, where there is one).
func (r *VaultServerReconciler) appsOn(ctx context.Context, server string) (*appsOnServer, error) {
	mine := appsOnServer{held: map[string]bool{}}
	err := r.everyVaultApp().Each(ctx, func(a *vaultv1beta1.VaultApp) {
		if a.Status.Server != server {
			return
		}
		mine.count++
		if a.Status.PolicyName == "" {
			return
		}
		reason := ""
		if c := meta.FindStatusCondition(a.Status.Conditions, vaultv1beta1.TypePolicySynced); c != nil {
			reason = c.Reason
		}
		switch {
		case reason == vaultv1beta1.ReasonHeldByAnotherCluster:
			mine.wanted = append(mine.wanted, a.Status.PolicyName)
		case reason != vaultv1beta1.ReasonNotOwned && a.Status.LastSyncTime != nil:
			// Held through a failed pass too: a Vault error must not
			// lengthen the tokens of a name still asked for.
			mine.held[a.Status.PolicyName] = true
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

// mergeWants is this cluster's requests as its registration keeps them:
// this server's as its check found them (mine holds its entry, empty when
// it asks for nothing), the other servers' of the cluster while fresh.
func mergeWants(registered, mine map[string]vaultclient.Wanted, now time.Time) map[string]vaultclient.Wanted {
	out := map[string]vaultclient.Wanted{}
	for server, w := range registered {
		if fresh(w, now) {
			out[server] = w
		}
	}
	for server, w := range mine {
		if len(w.Names) == 0 {
			delete(out, server)
			continue
		}
		out[server] = w
	}
	return out
}

// fresh reports whether a request was renewed within claimFresh: three
// checks of the server that made it.
func fresh(w vaultclient.Wanted, now time.Time) bool { return now.Sub(w.At) < claimFresh }

// wantedByOthers are the policy names other clusters' fresh requests name.
func wantedByOthers(id string, others []vaultclient.Registration, now time.Time) map[string]bool {
	out := map[string]bool{}
	for _, o := range others {
		if o.ID == id {
			continue // this cluster, under a former name
		}
		for _, w := range o.Wants {
			if !fresh(w, now) {
				continue
			}
			for _, name := range w.Names {
				out[name] = true
			}
		}
	}
	return out
}

// contestedPolicies are the policies this cluster holds that another
// cluster asks for (pure); at most MaxWants, sorted.
func contestedPolicies(id string, held map[string]bool, others []vaultclient.Registration, now time.Time) []string {
	out := []string{}
	for name := range wantedByOthers(id, others, now) {
		if held[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), vaultclient.MaxWants)]
}

// contested reports whether the VaultApp's policy is asked for by another
// cluster, as its server's status says.
func (r *pass) contested() bool {
	return r.server.Spec != nil && slices.Contains(r.server.Spec.Status.ContestedPolicies, r.name)
}

// boundContested shortens the tokens of a contested policy's role. A
// VaultServer's role always has a MaxTTL (its grants' cap), so the bound
// is undone by writing the cap again once the name is free; a MaxTTL of 0
// (none written: the renewals unbounded) is bounded all the same.
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

// contestMovedNote is the Event of a role written for its TTLs alone.
func contestMovedNote(name string, contested bool) string {
	if contested {
		return fmt.Sprintf("wrote role %s with tokens that live at most %s: a VaultApp of another cluster asks for policy %s too", name, vaultv1beta1.ContestedTokenTTL, name)
	}
	return fmt.Sprintf("wrote role %s with the spec's token TTLs again: no other cluster asks for policy %s any more", name, name)
}

// removedContestedNote is what the Event of a contested policy's removal
// adds: how long the tokens issued before keep working, and with whose rules.
func removedContestedNote(name string) string {
	return fmt.Sprintf("; a VaultApp of another cluster asks for policy %s: a token the role issued keeps working, with the rules that cluster writes there next, until it expires (at most %s after its login for tokens issued since the name was asked for; earlier ones at their own max TTL)",
		name, vaultv1beta1.ContestedTokenTTL)
}

// contested reports whether another cluster asks for the policy name: its
// VaultApp may take the name now, and the tokens the removed role issued
// read that cluster's rules until they expire. The VaultApp is gone, so
// the server's status no longer lists it: the registrations are read.
func (s *sweep) contested(ctx context.Context, name string) bool {
	reg, ok := s.Vault.(registrar)
	if !ok || !s.registered {
		return false // the environment's Vault: no registration of its own
	}
	if s.wanted == nil {
		seen, err := observeRegistrations(ctx, reg, s.Identity.Cluster)
		if err != nil {
			logf.FromContext(ctx).Info("registrations not read; the sweep's Events say nothing of names other clusters ask for", "error", err.Error())
			s.wanted = map[string]bool{}
			return false
		}
		s.wanted = wantedByOthers(s.Identity.ID, seen.others, time.Now())
	}
	return s.wanted[name]
}
