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
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestFilterPassesTheShardsNamespacesAlone(t *testing.T) {
	for _, count := range []int{1, 2, 4} {
		reached := map[string]int{}
		for i := range count {
			s := Shard{i, count}
			r := s.Filter(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
				if !s.Owns(req.Namespace) {
					t.Errorf("%v reconciled %s, of another shard", s, req.Namespace)
				}
				reached[req.Namespace]++
				return reconcile.Result{}, nil
			}), nil)
			for n := range 50 {
				ns := fmt.Sprintf("team-%d", n)
				if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app"}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for n := range 50 {
			if ns := fmt.Sprintf("team-%d", n); reached[ns] != 1 {
				t.Errorf("%d shards: %s reconciled %d times, want once", count, ns, reached[ns])
			}
		}
	}
}

func TestListWatchAsksForTheShard(t *testing.T) {
	var listed, watched string
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			listed = o.ShardSelector
			return &metav1.List{}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			watched = o.ShardSelector
			return watch.NewEmptyWatch(), nil
		},
	}
	for _, s := range []Shard{{0, 1}, {1, 2}} {
		sharded := toolscache.ToListerWatcherWithContext(s.ListWatch(lw))
		if _, err := sharded.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := sharded.WatchWithContext(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if listed != s.Selector() || watched != s.Selector() {
			t.Errorf("%v: list asked %q, watch %q, want %q", s, listed, watched, s.Selector())
		}
	}
}

// A closed gate holds every request back, asked again soon; open, they pass.
func TestFilterWaitsForTheGate(t *testing.T) {
	calls := 0
	g := &Gate{}
	r := Shard{}.Filter(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		calls++
		return reconcile.Result{}, nil
	}), g)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "app"}}
	res, err := r.Reconcile(context.Background(), req)
	if err != nil || calls != 0 || res.RequeueAfter != HeldRequeue {
		t.Fatalf("closed gate: %d calls, %+v, %v; want none, asked again after %s", calls, res, err, HeldRequeue)
	}
	if !g.Set(true) || g.Set(true) {
		t.Fatalf("Set reports a change once")
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil || calls != 1 {
		t.Fatalf("open gate: %d calls, %v; want one", calls, err)
	}
	if !(*Gate)(nil).Open() {
		t.Fatalf("a nil gate is closed")
	}
}
