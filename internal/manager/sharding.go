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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// ServesShardedLists asks the API server for one Namespace with s's
// selector and reports whether it filtered (KEP-5866: the response's
// shardInfo). An API server without the ShardedListAndWatch feature
// ignores the selector. The feature is the whole API server's, but only a
// built-in list says so: lists of custom resources (UnstructuredList) and
// metadata-only lists carry no shardInfo, though they are filtered.
func ServesShardedLists(ctx context.Context, cfg *rest.Config, s shard.Shard) (bool, error) {
	if !s.Sharded() {
		return false, nil
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var list corev1.NamespaceList
	if err := c.List(ctx, &list, &client.ListOptions{Limit: 1, Raw: &metav1.ListOptions{ShardSelector: s.Selector()}}); err != nil {
		return false, fmt.Errorf("list namespaces with shardSelector %q: %w", s.Selector(), err)
	}
	return list.ShardInfo != nil, nil
}

// ShardedCacheOptions are CacheOptions for shard s. Its cache of Secrets
// holds the ones its own credentials wrote (by their writer's bucket,
// ManagedSecretsOf: a label selector, served by every API server). Where
// the API server filters by namespace hash (serverSide), its informers of
// VaultApps and KeycloakClientCredentials ask for s's namespaces alone,
// so that each replica holds its part; the jobs that must see every one
// of them (shard 0's cluster-wide jobs, a rotation's check for another
// under way) then read the API server (Options.SplitCache). Servers and
// Namespaces stay whole: every shard reads them.
func ShardedCacheOptions(s shard.Shard, serverSide bool) cache.Options {
	opts := cacheOptionsOf(secretscontroller.ManagedSecretsOf(s))
	if !SplitsCache(s, serverSide) {
		return opts
	}
	opts.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		switch obj.(type) {
		case *vaultv1beta1.VaultApp, *secretsv1beta1.KeycloakClientCredential:
			lw = s.ListWatch(lw)
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
	return opts
}

// SplitsCache says whether shard s's cache holds its own range of
// VaultApps alone (ShardedCacheOptions), and so whether its cluster-wide
// jobs must read the API server (Options.SplitCache): both follow from it,
// since a cleanup that read a split cache would take another range's live
// VaultApp for gone.
func SplitsCache(s shard.Shard, serverSide bool) bool { return s.Sharded() && serverSide }
