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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// DefaultOrphanSweepInterval is how often Vault is searched for orphans.
const DefaultOrphanSweepInterval = 10 * time.Minute

// OrphanSweeper finds the policies (and their roles) this cluster's
// operator wrote for VaultApps that no longer exist, and removes them. A
// VaultApp whose finalizer was removed by hand, or that was deleted while
// the operator was not running, leaves such orphans: without the sweep they
// would grant Vault access to nobody's declaration for ever.
//
// Other clusters' operators share the Vault: a policy is swept only when
// its mark names this cluster (see sweepable). Retained policies (the admin
// allowed Retain) carry another mark, and policies whose mark names no
// cluster (written by earlier releases) may be another cluster's: both are
// left alone. An earlier release's policy is adopted by the cluster that
// has its VaultApp, at that VaultApp's next reconcile.
type OrphanSweeper struct {
	// Reader reads VaultApps from the API server: an object just created
	// may not be in the cache yet, and its policy must not look orphaned.
	Reader client.Reader
	// Apps are every namespace's VaultApps (the manager's cache, or the
	// API server in pages where the cache holds one shard): a policy whose
	// VaultApp is among them is not read at all (most are), so a sweep
	// costs Vault one list and a read per candidate orphan, not one per
	// VaultApp. None are known when its Reader is nil.
	Apps EveryVaultApp
	// Destinations lists the Vaults to sweep, each with this cluster's
	// identity there; when nil, Vault and Identity are the one.
	Destinations Destinations
	Vault        VaultAPI
	Recorder     events.EventRecorder
	Interval     time.Duration
	// Identity is this cluster's: only its marks are swept.
	Identity Identity
}

// sweep is one sweep of one server: its Vault and Identity shadow the
// sweeper's.
type sweep struct {
	*OrphanSweeper
	Vault    VaultAPI
	Identity Identity
	// apps are every VaultApp's namespace and name, listed once per sweep
	// of every server.
	apps []client.ObjectKey
	// read counts the candidates read: the policies not known live.
	read int
	// wanted are the names other clusters registered in this Vault ask
	// for, read at the sweep's first removal; nil before.
	wanted map[string]bool
	// registered: a VaultServer, where this cluster registers.
	registered bool
}

// NeedLeaderElection: only the leader writes to Vault.
func (s *OrphanSweeper) NeedLeaderElection() bool { return true }

// Start sweeps once at start, then every Interval, until ctx ends.
func (s *OrphanSweeper) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("vault-orphans")
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultOrphanSweepInterval
	}
	for {
		if removed, read, err := s.sweepAll(ctx); err != nil {
			log.Error(err, "sweep for orphaned Vault policies")
		} else if len(removed) > 0 {
			// policiesRead: the candidates read, those of no VaultApp listed.
			log.Info("removed orphaned Vault policies and roles", "names", removed, "policiesRead", read)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// Sweep removes, from every server, each managed policy whose VaultApp is
// gone, with the role of the same name when that role grants it, and
// returns their names. One server that fails does not stop the others.
func (s *OrphanSweeper) Sweep(ctx context.Context) ([]string, error) {
	removed, _, err := s.sweepAll(ctx)
	return removed, err
}

// sweepAll is Sweep, with the number of candidate policies it read.
func (s *OrphanSweeper) sweepAll(ctx context.Context) ([]string, int, error) {
	apps, err := s.liveApps(ctx)
	if err != nil {
		return nil, 0, err
	}
	if s.Destinations == nil {
		one := &sweep{OrphanSweeper: s, Vault: s.Vault, Identity: s.Identity, apps: apps}
		removed, err := one.run(ctx)
		return removed, one.read, err
	}
	var removed []string
	read := 0
	servers, errs := s.Destinations.All(ctx)
	for _, srv := range servers {
		one := &sweep{OrphanSweeper: s, Vault: srv.Vault, Identity: srv.Identity, apps: apps, registered: srv.Spec != nil}
		names, err := one.run(ctx)
		removed, read = append(removed, names...), read+one.read
		if err != nil {
			errs = errors.Join(errs, fmt.Errorf("sweep %s: %w", serverLabel(srv.Name), err))
		}
	}
	return removed, read, errs
}

// serverLabel names a server in messages.
func serverLabel(name string) string {
	if name == "" {
		return "the environment's Vault"
	}
	return "VaultServer " + name
}

func (s *sweep) run(ctx context.Context) ([]string, error) {
	// Only this cluster's form of names (app. or app-<prefix>.): the admin
	// may confine the operator's Vault policy to them; each is judged by
	// its mark, since clusters without a prefix share the form.
	names, err := s.Vault.ListPolicies(ctx, s.Identity.ownNames())
	if err != nil {
		return nil, err
	}
	live := s.livePolicies()
	var removed []string
	var errs error
	for _, name := range names {
		if live[name] {
			continue
		}
		s.read++
		gone, owner, err := s.orphaned(ctx, name)
		if err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		if !gone {
			continue
		}
		if err := s.remove(ctx, name, owner); err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		removed = append(removed, name)
		// Regarding the VaultApp that is gone, so that the Event is in its
		// namespace: not in default, where any tenant might read it.
		deleted := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name, UID: types.UID(owner.UID)}}
		note := ""
		if s.contested(ctx, name) {
			note = removedContestedNote(name)
		}
		s.Recorder.Eventf(deleted, nil, corev1.EventTypeNormal,
			vaultv1beta1.ReasonOrphanRemoved, "Sweep", "removed policy and role %s from Vault: VaultApp %s/%s (uid %s) no longer exists%s", name, owner.Namespace, owner.Name, owner.UID, note)
	}
	return removed, errs
}

// liveApps are every VaultApp's namespace and name; none without a
// reader of them.
func (s *OrphanSweeper) liveApps(ctx context.Context) ([]client.ObjectKey, error) {
	var keys []client.ObjectKey
	if s.Apps.Reader == nil {
		return nil, nil
	}
	err := s.Apps.Each(ctx, func(a *vaultv1beta1.VaultApp) {
		keys = append(keys, client.ObjectKey{Namespace: a.Namespace, Name: a.Name})
	})
	return keys, err
}

// livePolicies are the policy names of every VaultApp, under this
// server's identity. Every VaultApp counts, whichever server it uses: a
// policy whose VaultApp exists is kept anyway (see orphaned), so reading
// it would be a request for nothing, and with several servers one Vault
// would cost a read per VaultApp of the others.
func (s *sweep) livePolicies() map[string]bool {
	live := make(map[string]bool, len(s.apps))
	for _, k := range s.apps {
		live[s.Identity.policyName(k.Namespace, k.Name)] = true
	}
	return live
}

// orphaned reads a policy and reports whether this cluster's operator wrote
// it for a VaultApp that no longer exists.
func (s *sweep) orphaned(ctx context.Context, name string) (bool, vaultclient.Owner, error) {
	text, found, err := s.Vault.ReadPolicy(ctx, name)
	if vaultclient.Forbidden(err) {
		// Out of the operator's reach: not its to judge.
		return false, vaultclient.Owner{}, nil
	}
	if err != nil || !found {
		return false, vaultclient.Owner{}, err
	}
	mark := vaultclient.MarkOf(text)
	if !sweepable(s.Identity, name, mark) {
		return false, mark.Owner, nil
	}
	var app vaultv1beta1.VaultApp
	switch err := s.Reader.Get(ctx, client.ObjectKey{Namespace: mark.Owner.Namespace, Name: mark.Owner.Name}, &app); {
	case apierrors.IsNotFound(err):
		return true, mark.Owner, nil
	case err != nil:
		return false, mark.Owner, fmt.Errorf("read VaultApp %s/%s of policy %s: %w", mark.Owner.Namespace, mark.Owner.Name, name, err)
	}
	// A VaultApp of that name exists: its reconcile adopts or repairs the
	// policy (an earlier VaultApp of the same name is necessarily gone).
	// Even one that uses another server keeps it: two servers may be the
	// same Vault (the environment's and a VaultServer at its address), and
	// a VaultApp never moves, so what it wrote is where it writes.
	return false, mark.Owner, nil
}

// sweepable reports whether a policy is this cluster's to remove once its
// VaultApp is gone: managed (not retained), marked with this cluster, with
// the UID of the VaultApp it was written for (0.1 marked none, nor what
// Retain kept: such a policy without its VaultApp may be kept on purpose),
// under the name this cluster gives that VaultApp (a copy of the text
// under another name is someone else's). Names of a former prefix are not
// listed at all: a VaultApp moves from its former name itself.
func sweepable(id Identity, name string, mark vaultclient.PolicyMark) bool {
	return mark.Managed && id.wrote(mark.Owner) && mark.Owner.UID != "" &&
		name == id.policyName(mark.Owner.Namespace, mark.Owner.Name)
}

// remove deletes the role (if it grants the policy) and the policy, after
// reading the policy again: a VaultApp of the same name created since the
// first read has rewritten it with its own UID, and keeps it.
func (s *sweep) remove(ctx context.Context, name string, owner vaultclient.Owner) error {
	text, found, err := s.Vault.ReadPolicy(ctx, name)
	if err != nil || !found || vaultclient.MarkOf(text).Owner != owner {
		return err
	}
	return deletePolicyAndItsRole(ctx, s.Vault, name, owner.Namespace)
}

// deletePolicyAndItsRole deletes the role of the policy's name when it has
// the shape the operator writes for a VaultApp of namespace (roleShapedFor:
// a role that grants another policy, or binds another namespace, is someone
// else's), then the policy; the caller has judged the policy the operator's.
func deletePolicyAndItsRole(ctx context.Context, v VaultAPI, name, namespace string) error {
	role, found, err := v.ReadRole(ctx, name)
	if err != nil {
		return err
	}
	if found && roleShapedFor(role, namespace, name) {
		if err := v.DeleteRole(ctx, name); err != nil {
			return err
		}
	}
	return v.DeletePolicy(ctx, name)
}
