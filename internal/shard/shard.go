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

// Package shard splits the namespaces among replicas. A shard is a range of
// the 64-bit FNV-1a hash of a namespace's name: the hash the API server
// uses for sharded list and watch (KEP-5866, shardSelector), so that a
// replica's informers can ask for their range alone, and the same
// computation filters on the replica's side where the API server does not
// serve it.
package shard

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/sharding"
)

// NamespaceKey is the field a shard hashes.
const NamespaceKey = "object.metadata.namespace"

// Shard is the part Index (from 0) of Count. The zero value and Count 1
// are the whole: one replica reconciles everything.
type Shard struct {
	Index, Count int
}

// New checks index and count, as given by --shard-index and --shards.
func New(index, count int) (Shard, error) {
	switch {
	case count < 1:
		return Shard{}, fmt.Errorf("--shards=%d: must be at least 1", count)
	case count > 256:
		return Shard{}, fmt.Errorf("--shards=%d: at most 256 shards", count)
	case index < 0 || index >= count:
		return Shard{}, fmt.Errorf("--shard-index=%d: must be from 0 to %d (--shards=%d)", index, count-1, count)
	}
	return Shard{Index: index, Count: count}, nil
}

// Sharded says whether the replica has a part of the namespaces only.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Requirement is the shard's hash range, [Start, End) as the API server
// writes them: 0x and 16 lower-case hex digits, 2^64 for the last End.
func (s Shard) Requirement() sharding.ShardRangeRequirement {
	return sharding.ShardRangeRequirement{Key: NamespaceKey, Start: bound(s.Index, s.Count), End: bound(s.Index+1, s.Count)}
}

// bound is i/n of the hash space (n at least 1), as the API server writes it.
func bound(i, n int) string {
	if i >= max(n, 1) {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", boundInt(i, n))
}

// boundInt is i/n of the hash space, 2^64 for i = n.
func boundInt(i, n int) *big.Int {
	b := new(big.Int).Lsh(big.NewInt(1), 64)
	b.Mul(b, big.NewInt(int64(min(i, max(n, 1)))))
	return b.Div(b, big.NewInt(int64(max(n, 1))))
}

// Selector is the shardSelector of the shard's list and watch requests;
// empty for the whole.
func (s Shard) Selector() string {
	if !s.Sharded() {
		return ""
	}
	return sharding.NewSelector(s.Requirement()).String()
}

// Owns says whether the shard reconciles the objects of namespace.
func (s Shard) Owns(namespace string) bool {
	if !s.Sharded() {
		return true
	}
	return s.holds(hashOf(namespace))
}

// hashOf is namespace's hash as the API server writes it.
func hashOf(namespace string) string { return "0x" + sharding.HashField(namespace) }

// holds says whether the hash h falls in the shard's range.
func (s Shard) holds(h string) bool {
	r := s.Requirement()
	return !sharding.HexLess(h, r.Start) && sharding.HexLess(h, r.End)
}

// Of is the index of the shard, of count, that owns namespace.
func Of(namespace string, count int) int {
	h := hashOf(namespace)
	for i := range count {
		if (Shard{Index: i, Count: count}).holds(h) {
			return i
		}
	}
	// The ranges cover the hash space (TestEveryNamespaceHasOneShard).
	panic(fmt.Sprintf("shard: no range of %d holds %s", count, h))
}

// RunsClusterJobs says whether this shard's leader runs the jobs done once
// per cluster: the orphan sweep, the storage migration, the monitoring
// install, the reconciles of the cluster-scoped servers.
func (s Shard) RunsClusterJobs() bool { return s.Index == 0 }

// LeaseName is the name of the shard's leader-election Lease: base for the
// whole, base-shard-<index>-of-<count> otherwise (a new count is a new set
// of Leases).
func (s Shard) LeaseName(base string) string {
	if !s.Sharded() {
		return base
	}
	return fmt.Sprintf("%s-shard-%d-of-%d", base, s.Index, s.Count)
}

// String is what logs and metrics say: 1/2 is the second of two.
func (s Shard) String() string {
	if !s.Sharded() {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}
