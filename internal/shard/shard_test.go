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
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		index, count int
		err          string
	}{
		{0, 1, ""},
		{3, 4, ""},
		{0, 0, "--shards=0: must be at least 1"},
		{4, 4, "--shard-index=4: must be from 0 to 3 (--shards=4)"},
		{-1, 2, "--shard-index=-1"},
		{0, 257, "--shards=257: at most 256"},
	} {
		_, err := New(tc.index, tc.count)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("New(%d, %d) = %v, want %q", tc.index, tc.count, err, tc.err)
		}
	}
}

// The ranges are the API server's own examples (ListOptions.shardSelector).
func TestSelectorIsTheAPIServersFormat(t *testing.T) {
	for _, tc := range []struct {
		s    Shard
		want string
	}{
		{Shard{0, 1}, ""},
		{Shard{}, ""},
		{Shard{0, 2}, "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"},
		{Shard{1, 2}, "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"},
		{Shard{2, 4}, "shardRange(object.metadata.namespace, '0x8000000000000000', '0xc000000000000000')"},
		{Shard{0, 3}, "shardRange(object.metadata.namespace, '0x0000000000000000', '0x5555555555555555')"},
		{Shard{2, 3}, "shardRange(object.metadata.namespace, '0xaaaaaaaaaaaaaaaa', '0x10000000000000000')"},
	} {
		if got := tc.s.Selector(); got != tc.want {
			t.Errorf("%v: Selector() = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// Every namespace has exactly one shard for every count, Owns agrees with
// the API server's matcher for the same range, and Of names that shard.
func TestEveryNamespaceHasOneShard(t *testing.T) {
	for _, count := range []int{1, 2, 3, 4, 7, 16} {
		for n := range 2000 {
			ns := fmt.Sprintf("team-%d", n)
			owners := 0
			obj := &unstructured.Unstructured{}
			obj.SetNamespace(ns)
			for i := range count {
				s := Shard{i, count}
				matched, err := sharding.NewSelector(s.Requirement()).Matches(obj)
				if err != nil {
					t.Fatal(err)
				}
				if s.Owns(ns) != (matched || !s.Sharded()) {
					t.Fatalf("%v: Owns(%q) = %v, the API server's matcher %v", s, ns, s.Owns(ns), matched)
				}
				if s.Owns(ns) {
					owners++
					if Of(ns, count) != i {
						t.Fatalf("%d shards: Of(%q) = %d, owned by %d", count, ns, Of(ns, count), i)
					}
				}
			}
			if owners != 1 {
				t.Fatalf("%d shards: %q owned by %d", count, ns, owners)
			}
		}
	}
}

func TestLeaseNameAndClusterJobs(t *testing.T) {
	base := "vault-keycloak-operator.carbogame.com"
	for _, tc := range []struct {
		s     Shard
		lease string
		jobs  bool
	}{
		{Shard{0, 1}, base, true},
		{Shard{0, 2}, base + "-shard-0-of-2", true},
		{Shard{1, 2}, base + "-shard-1-of-2", false},
		{Shard{3, 4}, base + "-shard-3-of-4", false},
	} {
		if got := tc.s.LeaseName(base); got != tc.lease {
			t.Errorf("%v: LeaseName = %q, want %q", tc.s, got, tc.lease)
		}
		if got := tc.s.RunsClusterJobs(); got != tc.jobs {
			t.Errorf("%v: RunsClusterJobs = %v, want %v", tc.s, got, tc.jobs)
		}
	}
}

// A namespace's bucket is among its shard's buckets, for every count; a
// count that divides 256 gives each bucket to one shard, and every count
// covers the 256.
func TestBucketsCoverTheShardsNamespaces(t *testing.T) {
	for _, count := range []int{2, 3, 4, 7, 16, 256} {
		held := map[string]int{}
		for i := range count {
			s := Shard{i, count}
			for _, b := range s.Buckets() {
				held[b]++
			}
		}
		if len(held) != 256 {
			t.Errorf("%d shards hold %d buckets, want 256", count, len(held))
		}
		for b, n := range held {
			if 256%count == 0 && n != 1 {
				t.Errorf("%d shards: bucket %s held by %d", count, b, n)
			}
			if n > 2 {
				t.Errorf("%d shards: bucket %s held by %d, at most 2", count, b, n)
			}
		}
		for n := range 2000 {
			ns := fmt.Sprintf("team-%d", n)
			for i := range count {
				s := Shard{i, count}
				if s.Owns(ns) && !slices.Contains(s.Buckets(), Bucket(ns)) {
					t.Fatalf("%v owns %q, of bucket %s, not among its buckets %v", s, ns, Bucket(ns), s.Buckets())
				}
			}
		}
	}
	if got := (Shard{1, 2}).Buckets(); len(got) != 128 || got[0] != "80" || got[127] != "ff" {
		t.Errorf("shard 1/2's buckets: %v", got)
	}
	if got := (Shard{0, 3}).Buckets(); got[0] != "00" || got[len(got)-1] != "55" {
		t.Errorf("shard 0/3's buckets run %s…%s, want 00…55", got[0], got[len(got)-1])
	}
	if (Shard{}).Buckets() != nil || Bucket("team-a") != sharding.HashField("team-a")[:2] {
		t.Error("the whole has no buckets; a bucket is the hash's top byte")
	}
}
