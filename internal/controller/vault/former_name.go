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

	corev1 "k8s.io/api/core/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// A VaultApp's policy and role change name when its cluster's name prefix
// changes (app.<namespace>.<name> → app-<prefix>.<namespace>.<name>). What
// it had under the former name (status.policyName) is removed once the new
// name is written, so that no policy stays live that the operator no
// longer keeps within the grant. Workloads log in with the new role name.

// leaveFormerName removes the VaultApp's policy and role under its former
// name, if it had one, and then names the new one in the status. Until that
// succeeds the status keeps the former name: every later pass (and the
// finalizer) tries again, and no condition about the former name is taken
// for one about the new.
func (r *pass) leaveFormerName(ctx context.Context, former string) error {
	if former == "" || former == r.name {
		return nil
	}
	removed, err := r.removeFormer(ctx, former)
	if err == nil || vaultclient.Forbidden(err) {
		r.app.Status.PolicyName, r.app.Status.RoleName = r.name, r.name
		if r.app.Status.Vault != nil {
			r.app.Status.Vault.Role = r.name
		}
	}
	switch {
	case vaultclient.Forbidden(err):
		// The admin confined the operator to its new prefix: the former
		// name is out of its reach, and the admin's to remove.
		r.Recorder.Eventf(r.app, nil, corev1.EventTypeWarning, vaultv1beta1.ReasonRenamed, "Rename",
			"moved to %s; policy and role %s are out of the operator's reach in Vault (its policy does not allow them): remove them in Vault", r.name, former)
	case err != nil:
		return err
	case removed:
		r.Recorder.Eventf(r.app, nil, corev1.EventTypeNormal, vaultv1beta1.ReasonRenamed, "Rename",
			"moved to %s with the cluster's name prefix; removed policy and role %s from Vault", r.name, former)
	}
	return nil
}

// removeFormer deletes the policy of a former name, and the role of that
// name when it grants it, only when the policy is still this very
// VaultApp's; anything else under that name is left as it is.
func (r *pass) removeFormer(ctx context.Context, former string) (bool, error) {
	_, ours, err := r.formerPolicy(ctx, former)
	if err != nil || !ours {
		return false, err
	}
	return true, deletePolicyAndItsRole(ctx, r.Vault, former, r.app.Namespace)
}

// formerPolicy reads the policy under a former name, and reports whether
// it is still this very VaultApp's (formerPolicyOf).
func (r *pass) formerPolicy(ctx context.Context, former string) (string, bool, error) {
	text, found, err := r.Vault.ReadPolicy(ctx, former)
	if err != nil || !found {
		return "", false, err
	}
	return text, formerPolicyOf(r.Identity, r.app, former, vaultclient.MarkOf(text)), nil
}

// formerPolicyOf reports whether a policy under a former name was written
// for this very VaultApp (its UID) by this cluster, or by a release that
// marked no cluster: a UID proves the VaultApp, wherever it was written.
func formerPolicyOf(id Identity, app *vaultv1beta1.VaultApp, name string, mark vaultclient.PolicyMark) bool {
	o := mark.Owner
	return mark.Managed && (o.Cluster == "" || id.wrote(o)) &&
		o.UID != "" && o.UID == string(app.UID) && o.Namespace == app.Namespace && o.Name == app.Name &&
		tenancy.IsPolicyNameOf(name, app.Namespace, app.Name)
}
