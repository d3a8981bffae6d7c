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
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Filter passes on to r the requests of the shard's namespaces alone, once
// g is open (until then they wait, asked again every HeldRequeue). Every
// sharded controller goes through it, whatever its cache holds: where the
// API server does not filter, the cache holds every namespace's objects,
// and the watches of Namespaces, servers and Secrets map to any.
func (s Shard) Filter(r reconcile.Reconciler, g *Gate) reconcile.Reconciler {
	if !s.Sharded() && g == nil {
		return r
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if !s.Owns(req.Namespace) {
			return reconcile.Result{}, nil
		}
		if !g.Open() {
			return reconcile.Result{RequeueAfter: HeldRequeue}, nil
		}
		return r.Reconcile(ctx, req)
	})
}

// HeldRequeue is how soon a request held back by a closed Gate is asked again.
const HeldRequeue = 2 * time.Second

// ListWatch makes lw's list and watch requests ask the API server for the
// shard's namespaces alone (shardSelector).
func (s Shard) ListWatch(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	if !s.Sharded() {
		return lw
	}
	selector := s.Selector()
	inner := toolscache.ToListerWatcherWithContext(lw)
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.ShardSelector = selector
			return inner.ListWithContext(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.ShardSelector = selector
			return inner.WatchWithContext(ctx, opts)
		},
	}
}
