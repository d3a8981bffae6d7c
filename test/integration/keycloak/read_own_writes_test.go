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

package keycloak_test

import (
	"context"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
)

// TestTheManagersClientReadsItsOwnWrites: a pass that follows a write (a
// rotation's step, a status) reads from the cache; the manager's client,
// configured as the operator's (manager.ClientOptions), answers a read with
// the object as its own last write left it, never an older one. The same
// writes through a client without the option are read back stale now and
// then (about half of them here): were none, the test could not tell.
func TestTheManagersClientReadsItsOwnWrites(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "own-writes-"}}
	if err := op.Client.Create(ctx, namespace); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = op.Client.Delete(context.Background(), namespace) }()
	ns := namespace.Name
	stale := func(opts client.Options) int {
		mgr, err := ctrl.NewManager(op.Config, ctrl.Options{Scheme: manager.NewScheme(), Cache: manager.CacheOptions(), Client: opts,
			Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		mctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = mgr.Start(mctx) }()
		if !mgr.GetCache().WaitForCacheSync(mctx) {
			t.Fatal("the cache did not sync")
		}
		c := mgr.GetClient()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "step-"}, Data: map[string]string{"step": "0"}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		misses := 0
		for i := 1; i <= 200; i++ {
			cm.Data["step"] = strconv.Itoa(i)
			if err := c.Update(ctx, cm); err != nil {
				t.Fatal(err)
			}
			var read corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &read); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
			if read.Data["step"] != cm.Data["step"] {
				misses++
			}
		}
		return misses
	}
	if n := stale(manager.ClientOptions()); n != 0 {
		t.Fatalf("the operator's client read %d of 200 writes back older than written", n)
	}
	n := stale(client.Options{})
	if n == 0 {
		t.Fatal("without read-your-writes every read came after the cache caught up: the test shows nothing")
	}
	t.Logf("without read-your-writes, %d of 200 reads right after a write were stale", n)
}
