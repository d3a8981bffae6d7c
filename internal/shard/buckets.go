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
	"math/big"

	"k8s.io/apimachinery/pkg/sharding"
)

// Buckets cut the hash space in 256: a namespace's bucket is the top byte
// of its hash, two hex digits. They serve where the API server cannot
// filter by namespace hash: a credential writes Secrets into namespaces
// other than its own, and its shard must watch them. Each such Secret
// carries its writer's bucket in a label, fixed when written (a change of
// the shard count relabels nothing), and a shard's informer selects the
// buckets its range covers by a label selector, which every API server
// serves. With a count that divides 256 the ranges fall on bucket bounds;
// with another, a shard also holds the buckets it shares with its
// neighbours, and leaves their objects to them (Owns).
const bucketBits = 8

// Bucket is namespace's bucket: "00" to "ff".
func Bucket(namespace string) string { return sharding.HashField(namespace)[:2] }

// Buckets are the buckets the shard's range covers in whole or in part,
// in order; nil for the whole.
func (s Shard) Buckets() []string {
	if !s.Sharded() {
		return nil
	}
	first := new(big.Int).Rsh(boundInt(s.Index, s.Count), 64-bucketBits)
	// The last bucket holds the range's last hash, End - 1.
	last := new(big.Int).Sub(boundInt(s.Index+1, s.Count), big.NewInt(1))
	last.Rsh(last, 64-bucketBits)
	var out []string
	for b := first.Int64(); b <= last.Int64(); b++ {
		out = append(out, fmt.Sprintf("%02x", b))
	}
	return out
}
