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

package outage

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The resources of a service that is down come out together, once, when a
// probe says it answers; those of another service that is still down stay.
func TestOutageReleasesTheWaitingWhenTheServiceAnswers(t *testing.T) {
	o := New(10 * time.Millisecond)
	var vaultUp atomic.Bool
	probes := atomic.Int32{}
	vault := func(context.Context) error {
		probes.Add(1)
		if vaultUp.Load() {
			return nil
		}
		return errors.New("connection refused")
	}
	keycloak := func(context.Context) error { return errors.New("connection refused") }
	a := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "a"}}
	b := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "b"}}
	o.Hold("vault", vault, a)
	o.Hold("vault", vault, b)
	o.Hold("vault", vault, a)
	o.Hold("keycloak-main", keycloak, a)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = o.Start(ctx) }()
	// Down: probed again and again, nothing released.
	deadline := time.After(5 * time.Second)
	for probes.Load() < 3 {
		select {
		case e := <-o.ready:
			t.Fatalf("%v released while Vault is down", e.Object)
		case <-deadline:
			t.Fatal("Vault was not probed")
		case <-time.After(5 * time.Millisecond):
		}
	}
	vaultUp.Store(true)
	released := map[reconcile.Request]int{}
	for len(released) < 2 {
		select {
		case e := <-o.ready:
			released[e.Object]++
		case <-deadline:
			t.Fatalf("released %v, want a and b once Vault answers", released)
		}
	}
	if released[a] != 1 || released[b] != 1 {
		t.Fatalf("released %v, want a and b once each", released)
	}
	if o.Held("vault") != 0 || o.Held("keycloak-main") != 1 {
		t.Fatalf("waiting for vault %d, for keycloak-main %d; want 0 and 1", o.Held("vault"), o.Held("keycloak-main"))
	}
	// Failing again right after Vault answered a probe (the probe and the
	// request disagree), a resource backs off rather than waits: nothing
	// is retried every interval forever.
	if o.Hold("vault", vault, a) || o.Held("vault") != 0 {
		t.Fatal("a resource waits again within RecoveryGrace of its service's return")
	}
	if !o.Hold("keycloak-main", keycloak, b) {
		t.Fatal("another service's resources no longer wait")
	}
}
