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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// A shard's cache holds the Secrets its own credentials wrote (a label
// selector on any API server); its informers of VaultApps and credentials
// ask for its range where the API server filters.
func TestShardedCacheOptions(t *testing.T) {
	written := func(ns string) labels.Set {
		return labels.Set{secretscontroller.ManagedByLabel: secretscontroller.ManagedByValue, secretscontroller.OwnerBucketLabel: shard.Bucket(ns)}
	}
	for _, tc := range []struct {
		s          shard.Shard
		serverSide bool
		split      bool
	}{{shard.Shard{}, true, false}, {shard.Shard{Index: 1, Count: 2}, false, false}, {shard.Shard{Index: 1, Count: 2}, true, true}} {
		opts := ShardedCacheOptions(tc.s, tc.serverSide)
		if (opts.NewInformer != nil) != tc.split || SplitsCache(tc.s, tc.serverSide) != tc.split {
			t.Errorf("%v, server side %t: informers split %t, want %t", tc.s, tc.serverSide, opts.NewInformer != nil, tc.split)
		}
		var selector labels.Selector
		for obj, by := range opts.ByObject {
			if _, ok := obj.(*corev1.Secret); ok {
				selector = by.Label
			}
		}
		for _, ns := range []string{"orders", "payments", "auth", "marketing"} {
			if got := selector.Matches(written(ns)); got != tc.s.Owns(ns) {
				t.Errorf("%v: the Secrets written from %s cached %t, the shard owns it %t", tc.s, ns, got, tc.s.Owns(ns))
			}
		}
	}
}
