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

package manager

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// LeaderElectionBase names the leader-election Lease: itself unsharded,
// <base>-shard-<i>-of-<N> for shard i of N.
const LeaderElectionBase = "vault-keycloak-operator.carbogame.com"

// leaseCheckInterval is how often the leader looks for leaders of another
// shard count.
const leaseCheckInterval = 2 * time.Second

// shardCountGuard opens the gate of this replica's reconciles once it leads
// and no older leader of another shard count holds its Lease, and closes it
// while one does: during a rollout from N shards to M, a namespace is never
// two leaders' at once. The old leaders go on until they stop (handing
// their Leases back) or their Leases expire; the new ones take over within
// leaseCheckInterval of that. It keeps looking for as long as it leads.
type shardCountGuard struct {
	reader    client.Reader
	namespace string
	shard     shard.Shard
	gate      *shard.Gate
	log       logr.Logger
}

// NeedLeaderElection: the guard runs on the leader, whose reconciles it holds.
func (g *shardCountGuard) NeedLeaderElection() bool { return true }

func (g *shardCountGuard) Start(ctx context.Context) error {
	ticker := time.NewTicker(leaseCheckInterval)
	defer ticker.Stop()
	for {
		g.check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func (g *shardCountGuard) check(ctx context.Context) {
	var list coordinationv1.LeaseList
	if err := g.reader.List(ctx, &list, client.InNamespace(g.namespace)); err != nil {
		if apierrors.IsForbidden(err) {
			// A setup without the right: reconcile, as before the guard.
			if g.gate.Set(true) {
				g.log.Error(err, "cannot list the leader-election Leases: nothing keeps two shard counts apart (grant list on leases)", "namespace", g.namespace)
			}
			return
		}
		// Unknown: keep the gate as it is (closed before the first answer).
		g.log.Error(err, "cannot read the leader-election Leases", "namespace", g.namespace)
		return
	}
	var leases []shard.Lease
	for _, l := range list.Items {
		lease := shard.Lease{Name: l.Name}
		if l.Spec.HolderIdentity != nil {
			lease.Holder = *l.Spec.HolderIdentity
		}
		if l.Spec.AcquireTime != nil {
			lease.Acquired = l.Spec.AcquireTime.Time
		}
		if l.Spec.RenewTime != nil {
			lease.Renewed = l.Spec.RenewTime.Time
		}
		if l.Spec.LeaseDurationSeconds != nil {
			lease.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		leases = append(leases, lease)
	}
	conflicting := g.shard.Conflicting(LeaderElectionBase, leases, time.Now())
	if g.gate.Set(len(conflicting) == 0) {
		if len(conflicting) > 0 {
			g.log.Info("holding reconciles: leaders of another shard count hold their Leases; stop the replicas of the old count",
				"shard", g.shard.String(), "leases", conflicting)
		} else {
			g.log.Info("reconciling: no leader of another shard count", "shard", g.shard.String())
		}
	}
}
