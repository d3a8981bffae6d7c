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
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// The operator writes and removes only the Vault objects it wrote for a
// VaultApp. Their names (app.<namespace>.<name>) are no proof: anyone with
// Vault rights may have created an object of that name first, and another
// cluster's operator writes the same names for the same namespace/name.
//
//   - A policy whose mark names another cluster is that cluster's, whatever
//     else is true: not even a status saying the policy was in step (two
//     clusters' VaultApps of one name may both have been, under a release
//     that marked no cluster) takes it over.
//   - Otherwise a policy is the VaultApp's when its first line carries the
//     operator's managed mark for this namespace/name (the UID may be an
//     earlier VaultApp of the same name, which is then necessarily gone; a
//     mark without a cluster, from an earlier release, is adopted: the next
//     write puts this cluster's name in it), or when the VaultApp's status
//     says the operator already had it in step (a hand edit that dropped the
//     mark is drift, and is repaired). A policy with the retained mark was
//     released by deletionPolicy Retain and is no longer the operator's.
//   - A role is the VaultApp's when it has the shape the operator writes for
//     it (roleShapedFor: its policy alone, bound to ServiceAccounts of the
//     VaultApp's namespace alone), or when the status says the operator had
//     it in step (a hand edit since is drift, and is repaired). Vault OSS
//     keeps no metadata on auth roles (alias_metadata is Enterprise), so a
//     role carries no mark: a role an admin wrote under the name, granting
//     another policy too or binding another namespace, is not the
//     operator's, and is neither rewritten nor deleted. The policy is
//     judged first, so a role is never taken from beside another cluster's
//     policy.
//
// The status is the operator's alone: the editor roles grant no write on
// vaultapps/status, and a create ignores a status sent with it.

// Kinds of Vault object, as messages name them.
const (
	kindPolicy = "policy"
	kindRole   = "role"
)

// errNotOwned is a Vault object in the way that the operator did not write.
type errNotOwned struct {
	kind, name, why string
	// cluster is the other cluster whose operator holds the name, if any.
	cluster string
	// released: that cluster retained the policy (deletionPolicy Retain),
	// and no operator will remove it.
	released bool
	// namesake is the ID of another cluster given this cluster's name
	// that holds the object, if any.
	namesake string
}

func (e *errNotOwned) Error() string {
	if e.namesake != "" {
		return fmt.Sprintf("%s %s in Vault belongs to another cluster given this cluster's name (id %s; %s): left untouched; give each cluster its own name (the VaultServer's spec.cluster)",
			e.kind, e.name, e.namesake, e.why)
	}
	if e.cluster != "" && e.released {
		return fmt.Sprintf("%s %s in Vault was retained by cluster %s (%s): no operator removes it; the Vault admin deletes it, or the VaultApp is renamed",
			e.kind, e.name, e.cluster, e.why)
	}
	if e.cluster != "" {
		return fmt.Sprintf("%s %s in Vault belongs to cluster %s (%s): left untouched; give each cluster that shares this Vault its own name prefix (--vault-name-prefix), or rename the VaultApp",
			e.kind, e.name, e.cluster, e.why)
	}
	return fmt.Sprintf("%s %s exists in Vault and was not written for this VaultApp (%s): left untouched; remove it in Vault, or rename the VaultApp",
		e.kind, e.name, e.why)
}

// ownsPolicy judges a policy found under the VaultApp's name; an
// errNotOwned when it is not the VaultApp's.
func ownsPolicy(id Identity, app *vaultv1beta1.VaultApp, status *vaultv1beta1.VaultAppStatus, name, text string) *errNotOwned {
	mark := vaultclient.MarkOf(text)
	switch {
	case (mark.Managed || mark.Retained) && id.namesake(mark.Owner):
		return &errNotOwned{kind: kindPolicy, name: name, namesake: mark.Owner.ClusterID,
			why: fmt.Sprintf("its operator wrote it for VaultApp %s/%s there", mark.Owner.Namespace, mark.Owner.Name)}
	case (mark.Managed || mark.Retained) && mark.Owner.Cluster != "" && !id.owns(mark.Owner):
		return &errNotOwned{kind: kindPolicy, name: name, cluster: mark.Owner.Cluster, released: mark.Retained,
			why: fmt.Sprintf("its operator wrote it for VaultApp %s/%s there", mark.Owner.Namespace, mark.Owner.Name)}
	case mark.Retained:
		return &errNotOwned{kind: kindPolicy, name: name,
			why: fmt.Sprintf("it was retained from VaultApp %s/%s (uid %s)", mark.Owner.Namespace, mark.Owner.Name, mark.Owner.UID)}
	case mark.Managed && mark.Owner.Namespace == app.Namespace && mark.Owner.Name == app.Name:
		return nil
	case mark.Managed:
		return &errNotOwned{kind: kindPolicy, name: name,
			why: fmt.Sprintf("the operator wrote it for VaultApp %s/%s", mark.Owner.Namespace, mark.Owner.Name)}
	case hadInStep(status, name, vaultv1beta1.TypePolicySynced):
		return nil
	}
	return &errNotOwned{kind: kindPolicy, name: name, why: "its first line carries no mark of the operator"}
}

// ownsRole judges a role found under the VaultApp's name, once its policy
// was judged the VaultApp's (or absent).
func ownsRole(app *vaultv1beta1.VaultApp, status *vaultv1beta1.VaultAppStatus, name string, role vaultclient.Role) *errNotOwned {
	if roleShapedFor(role, app.Namespace, name) || hadInStep(status, name, vaultv1beta1.TypeRoleSynced) {
		return nil
	}
	return &errNotOwned{kind: kindRole, name: name, why: fmt.Sprintf("it grants policies %v to ServiceAccounts of %s, where the operator writes policy %s alone for namespace %s",
		role.Policies, role.Namespace, name, app.Namespace)}
}

// roleShapedFor reports whether a role has the shape the operator writes
// for the VaultApp of namespace whose policy is policy: that policy and no
// other, for ServiceAccounts of that namespace alone (which ones, and the
// TTLs, may differ: the spec changes, and hand edits of them are drift).
func roleShapedFor(role vaultclient.Role, namespace, policy string) bool {
	return role.Namespace == namespace && slices.Equal(role.Policies, []string{policy})
}

// hadInStep reports whether the status says the operator had the object
// of this name in step: a condition about a former name (the cluster's
// prefix changed) says nothing of what holds the new one.
func hadInStep(status *vaultv1beta1.VaultAppStatus, name, typ string) bool {
	return status.PolicyName == name && meta.IsStatusConditionTrue(status.Conditions, typ)
}

// dropOwnRole deletes this cluster's role of the name when the policy of
// that name turned out to be another cluster's: two clusters without a
// prefix wrote the same name (before this release, or both at once for a
// new VaultApp), and the role, in this cluster's own auth mount, would
// hand this cluster's workloads the other cluster's policy. Only a role
// the status says the operator had in step, granting that policy, goes.
// A failure is logged; the next refresh tries again.
func (r *pass) dropOwnRole(ctx context.Context, status *vaultv1beta1.VaultAppStatus, notOwned *errNotOwned) {
	name := notOwned.name
	role, found, err := r.Vault.ReadRole(ctx, name)
	if err == nil && found && slices.Contains(role.Policies, name) && hadInStep(status, name, vaultv1beta1.TypeRoleSynced) {
		if err = r.Vault.DeleteRole(ctx, name); err == nil {
			notOwned.why += "; this cluster's role " + name + ", which granted it, was removed"
		}
	}
	if err != nil {
		logf.FromContext(ctx).Error(err, "remove this cluster's role beside another cluster's policy", "role", name)
	}
}
