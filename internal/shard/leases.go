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

package shard

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Lease is what Conflicting reads of a leader-election Lease.
type Lease struct {
	Name, Holder      string
	Acquired, Renewed time.Time
	Duration          time.Duration
}

// CountOf is the shard count of the leader-election Lease name, for the
// Leases named after base: 1 for base itself, N for base-shard-i-of-N.
func CountOf(base, name string) (int, bool) {
	if name == base {
		return 1, true
	}
	rest, ok := strings.CutPrefix(name, base+"-shard-")
	if !ok {
		return 0, false
	}
	var index, count int
	if _, err := fmt.Sscanf(rest, "%d-of-%d", &index, &count); err != nil || fmt.Sprintf("%d-of-%d", index, count) != rest {
		return 0, false
	}
	return count, true
}

// Conflicting are the Leases that leaders of another shard count than s's
// hold at now, and held before s's own Lease was acquired: while one is, a
// namespace may be two replicas' at once (a rollout from one count to
// another, two Deployments at odds). The older leaders go on; the newer
// wait for them to hand their Leases back or let them expire. Without its
// own Lease among leases, s counts as the newest.
func (s Shard) Conflicting(base string, leases []Lease, now time.Time) []string {
	count := max(s.Count, 1)
	own := now
	for _, l := range leases {
		if l.Name == s.LeaseName(base) {
			own = l.Acquired
		}
	}
	var out []string
	for _, l := range leases {
		n, ok := CountOf(base, l.Name)
		if !ok || n == count || l.Holder == "" || !now.Before(l.Renewed.Add(l.Duration)) || !l.Acquired.Before(own) {
			continue
		}
		out = append(out, l.Name)
	}
	return out
}

// Gate holds reconciles back while leaders of another shard count hold
// their Leases. A nil Gate is open.
type Gate struct{ open atomic.Bool }

// Open says whether reconciles may run.
func (g *Gate) Open() bool { return g == nil || g.open.Load() }

// Set opens or closes the gate; it reports whether that changed it.
func (g *Gate) Set(open bool) bool { return g.open.Swap(open) != open }
