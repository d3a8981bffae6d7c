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
	"errors"
	"fmt"
	"sync"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// What a VaultApp pass does in Vault: the policy and role read, compared
// and written (or removed when nothing is granted), only where the
// operator owns them.

// act brings Vault in step with what is granted: the policy and role
// written, or removed when nothing is granted; and nothing left live under
// a former name, whatever holds the new one.
func (r *pass) act(ctx context.Context, granted grant) (written, error) {
	var changed written
	var err error
	if granted.empty() {
		changed, err = r.revoke(ctx)
	} else {
		changed, err = r.sync(ctx, granted)
	}
	var notOwned *errNotOwned
	if err != nil && !errors.As(err, &notOwned) {
		return changed, err
	}
	if ferr := r.leaveFormerName(ctx, r.before.PolicyName); ferr != nil {
		return changed, ferr
	}
	if notOwned != nil && (notOwned.cluster != "" || notOwned.namesake != "") {
		r.dropOwnRole(ctx, r.before, notOwned)
	}
	return changed, err
}

// refuse removes what the operator had live in Vault for a VaultApp it
// cannot act on, and reports why; the VaultApp then waits for a change.
func (r *pass) refuse(ctx context.Context, msg string) (report, error) {
	removed, err := r.removeOwned(ctx)
	var notOwned *errNotOwned
	if err == nil || errors.As(err, &notOwned) {
		err = r.leaveFormerName(ctx, r.before.PolicyName)
	}
	if err != nil {
		return failed(r.failure(err, vaultv1beta1.ReasonVaultError)), err
	}
	if removed {
		msg = fmt.Sprintf("removed policy and role %s from Vault: %s", r.name, msg)
	}
	rep := refused(vaultv1beta1.ReasonNotAllowed, msg)
	if removed {
		rep.reason, rep.changedVault = vaultv1beta1.ReasonGrantRevoked, true
	}
	rep.waits = true
	return rep, nil
}

// written says what a sync wrote.
type written int

const (
	nothing written = iota
	policyOnly
	roleOnly
	policyAndRole
	// roleTTLs: the role alone, for its token TTLs, because its name
	// became or ceased to be contested (contested.go): no drift.
	roleTTLs
)

func (w written) String() string {
	return [...]string{"nothing", "wrote policy", "wrote role", "wrote policy and role", "wrote role"}[w]
}

// sync reads the policy and the role, and writes each that differs and is
// the operator's to write.
func (r *pass) sync(ctx context.Context, granted grant) (written, error) {
	wantPolicy, wantRole := Desired(r.app, r.Vault.KV(), r.name, r.ownerOf(), granted.VaultGrant)
	otherTTLs := boundContested(wantRole) // the role's other form
	if r.contested() {
		wantRole, otherTTLs = otherTTLs, wantRole
	}

	have, err := r.observe(ctx)
	if err != nil {
		return nothing, err
	}
	// Both are judged the operator's (or absent) by now, so the two writes
	// go at once. Neither depends on the other: a role may name a policy
	// not written yet, and if one write fails the next reconcile finds the
	// other in step.
	var policyErr, roleErr error
	var w written
	var wg sync.WaitGroup
	if !have.policyFound || have.policy != wantPolicy {
		wg.Go(func() { policyErr = r.Vault.WritePolicy(ctx, r.name, wantPolicy) })
		w = policyOnly
	}
	if !have.roleFound || !have.role.Equal(wantRole) {
		roleErr = r.Vault.WriteRole(ctx, r.name, wantRole)
		w |= roleOnly
		if w == roleOnly && have.roleFound && have.role.Equal(otherTTLs) {
			w = roleTTLs // written in the other form: no drift
		}
	}
	wg.Wait()
	if err := errors.Join(policyErr, roleErr); err != nil {
		return nothing, err
	}
	return w, nil
}

// vaultState is what Vault holds under a VaultApp's name.
type vaultState struct {
	policy      string
	policyFound bool
	role        vaultclient.Role
	roleFound   bool
}

// observe reads the policy and the role, and refuses (errNotOwned) when
// either exists and is not the operator's: nothing is written or removed
// unless both are. The policy is judged first, since a role is the
// operator's only by granting the operator's policy.
func (r *pass) observe(ctx context.Context) (vaultState, error) {
	var st vaultState
	// A VaultApp never synced, whose name a recent listing shows free, has
	// nothing to read (see vaultclient.Client.Free): a thousand VaultApps
	// created at once cost a few listings, not two reads each.
	if r.before.ObservedGeneration == 0 && r.Vault.Free(ctx, r.name) {
		return st, nil
	}
	// Both reads at once: one round trip of latency instead of two.
	var roleErr error
	roleRead := make(chan struct{})
	go func() {
		defer close(roleRead)
		st.role, st.roleFound, roleErr = r.Vault.ReadRole(ctx, r.name)
	}()
	var err error
	st.policy, st.policyFound, err = r.Vault.ReadPolicy(ctx, r.name)
	<-roleRead
	if err != nil {
		return st, err
	}
	if st.policyFound {
		if notOwned := ownsPolicy(r.Identity, r.app, r.before, r.name, st.policy); notOwned != nil {
			return st, notOwned
		}
	}
	if roleErr != nil {
		return st, roleErr
	}
	if st.roleFound {
		if notOwned := ownsRole(r.app, r.before, r.name, st.role); notOwned != nil {
			return st, notOwned
		}
	}
	return st, nil
}

// revoke removes the policy and role when the namespace may no longer use
// anything the VaultApp asks: a grant taken back shrinks what is live.
func (r *pass) revoke(ctx context.Context) (written, error) {
	removed, err := r.removeOwned(ctx)
	if err != nil {
		return nothing, err
	}
	if removed {
		return policyAndRole, nil
	}
	return nothing, nil
}

// removeOwned deletes the role and then the policy, each only if it exists
// and is the operator's; it reports whether it deleted anything. An object
// that is not the operator's is an errNotOwned.
func (r *pass) removeOwned(ctx context.Context) (bool, error) {
	have, err := r.observe(ctx)
	if err != nil {
		return false, err
	}
	if have.roleFound {
		if err := r.Vault.DeleteRole(ctx, r.name); err != nil {
			return false, err
		}
	}
	if have.policyFound {
		if err := r.Vault.DeletePolicy(ctx, r.name); err != nil {
			return true, err
		}
	}
	return have.roleFound || have.policyFound, nil
}

// ownerOf is the owner the marks of the VaultApp's policy name.
func (r *pass) ownerOf() vaultclient.Owner {
	return vaultclient.Owner{Namespace: r.app.Namespace, Name: r.app.Name, UID: string(r.app.UID), Cluster: r.Identity.Cluster, ClusterID: r.Identity.ID}
}
