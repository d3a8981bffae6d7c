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
	"slices"
	"testing"
	"time"
)

func TestCountOf(t *testing.T) {
	base := "vko.example"
	for _, tc := range []struct {
		name  string
		count int
		ok    bool
	}{
		{base, 1, true},
		{base + "-shard-0-of-2", 2, true},
		{base + "-shard-3-of-16", 16, true},
		{base + "-shard-x-of-2", 0, false},
		{base + "-shard-1-of-2-extra", 0, false},
		{"other-lease", 0, false},
		{base + "-other", 0, false},
	} {
		count, ok := CountOf(base, tc.name)
		if count != tc.count || ok != tc.ok {
			t.Errorf("CountOf(%q) = %d, %v; want %d, %v", tc.name, count, ok, tc.count, tc.ok)
		}
	}
}

func TestConflicting(t *testing.T) {
	base, now := "vko.example", time.Now()
	// Held since a minute, or (newer) since now.
	held := func(name string) Lease {
		return Lease{Name: name, Holder: "pod-a", Acquired: now.Add(-time.Minute), Renewed: now.Add(-3 * time.Second), Duration: 12 * time.Second}
	}
	newer := func(name string) Lease {
		l := held(name)
		l.Acquired = now.Add(-time.Second)
		return l
	}
	expired := held(base + "-shard-0-of-4")
	expired.Renewed = now.Add(-13 * time.Second)
	released := held(base + "-shard-1-of-4")
	released.Holder = ""
	for _, tc := range []struct {
		name   string
		s      Shard
		leases []Lease
		want   []string
	}{
		{"unsharded, alone", Shard{}, []Lease{held(base)}, nil},
		{"from unsharded to two: the new shard waits for the old leader", Shard{1, 2}, []Lease{held(base), newer(base + "-shard-1-of-2")}, []string{base}},
		{"from unsharded to two: the old leader goes on", Shard{}, []Lease{held(base), newer(base + "-shard-1-of-2")}, nil},
		{"a new shard without its Lease yet waits", Shard{0, 2}, []Lease{held(base)}, []string{base}},
		{"from two back to one", Shard{0, 1}, []Lease{held(base + "-shard-0-of-2"), held(base + "-shard-1-of-2"), newer(base)}, []string{base + "-shard-0-of-2", base + "-shard-1-of-2"}},
		{"the same count's other shards", Shard{0, 2}, []Lease{held(base + "-shard-1-of-2")}, nil},
		{"expired or handed back", Shard{0, 2}, []Lease{expired, released}, nil},
		{"another tool's Lease", Shard{0, 2}, []Lease{held("kube-scheduler")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Conflicting(base, tc.leases, now); !slices.Equal(got, tc.want) {
				t.Errorf("Conflicting = %v, want %v", got, tc.want)
			}
		})
	}
}
