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
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/carbogame/vault-keycloak-operator/internal/counter"
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
	if got := held(t); got["vault"] != 2 || got["keycloak-main"] != 1 {
		t.Fatalf("vko_outage_held_resources = %v, want vault 2, keycloak-main 1", got)
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
	if got := held(t); got["vault"] != 0 || got["keycloak-main"] != 1 {
		t.Fatalf("vko_outage_held_resources = %v after Vault answered, want vault absent, keycloak-main 1", got)
	}
	if n := counter.Value(releasedTotal.WithLabelValues("vault")); n != 2 {
		t.Fatalf("vko_outage_released_total{service=vault} = %v, want 2", n)
	}
	if up, down := counter.Value(probesTotal.WithLabelValues("vault", "answered")), counter.Value(probesTotal.WithLabelValues("vault", "no_answer")); up != 1 || down < 3 {
		t.Fatalf("vko_outage_probes_total for vault: answered %v, no_answer %v; want 1 and at least 3", up, down)
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

// held reads vko_outage_held_resources by service from the manager's registry.
func held(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "vko_outage_held_resources" {
			continue
		}
		for _, m := range f.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}
