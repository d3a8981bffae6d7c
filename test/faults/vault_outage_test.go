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

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R1: Vault goes away for a minute while 300 VaultApps are being created
// and updated: 50 s stopped (connection refused), then 10 s started but
// sealed (503), as in a rollout, then unsealed. Vault keeps its data (file
// storage), so nothing the operator wrote before may be lost.
// Promises: the manager does not crash; every VaultApp changed during the
// outage says Ready=False VaultUnavailable after its first reconcile; all
// are Ready within 30 s of Vault's return, whatever their backoff (the
// manager runs with the default --max-backoff of 2 minutes); Vault then
// holds exactly one policy and one role per VaultApp, at its spec.
func TestVaultDownForAMinute(t *testing.T) {
	const (
		before = 150 // synced before the outage, updated during it
		during = 150 // created during the outage
		down   = 50 * time.Second
		sealed = 10 * time.Second
	)
	ctx := context.Background()
	w := newWorldWith(t, harness.StartPersistentVault)
	m := w.startManager(t, "manager", w.vault.Addr)
	defer m.Stop()

	want := map[string]bool{}
	for i := range before {
		name := fmt.Sprintf("app-%03d", i)
		if err := w.c.Create(ctx, vaultApp(name, "v1/*")); err != nil {
			t.Fatal(err)
		}
		want[name] = true
	}
	waitAll(t, w.c, "v1/*", before, 2*time.Minute)

	w.vault.Stop()
	outageStart := time.Now()
	for i := range before {
		name := fmt.Sprintf("app-%03d", i)
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			app := &vaultv1beta1.VaultApp{}
			if err := w.c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, app); err != nil {
				return err
			}
			app.Spec.Policy.Rules[0].Path = "v2/*"
			return w.c.Update(ctx, app)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range during {
		name := fmt.Sprintf("app-%03d", before+i)
		if err := w.c.Create(ctx, vaultApp(name, "v2/*")); err != nil {
			t.Fatal(err)
		}
		want[name] = true
	}
	changed := time.Since(outageStart)

	// Each says why it is not Ready, from its first reconcile on.
	var told time.Duration
	for {
		n, err := countReason(ctx, w.c, &vaultv1beta1.VaultAppList{}, vaultv1beta1.ReasonVaultUnavailable)
		if err != nil {
			t.Fatal(err)
		}
		if n == len(want) {
			told = time.Since(outageStart)
			break
		}
		if time.Since(outageStart) > down {
			t.Fatalf("%d of %d VaultApps say %s %s into the outage", n, len(want), vaultv1beta1.ReasonVaultUnavailable, down)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Until(outageStart.Add(down)))
	if err := w.vault.StartSealed(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(sealed)
	if n, err := countReason(ctx, w.c, &vaultv1beta1.VaultAppList{}, vaultv1beta1.ReasonVaultUnavailable); err != nil || n != len(want) {
		t.Fatalf("while Vault is sealed, %d of %d VaultApps say %s (err %v)", n, len(want), vaultv1beta1.ReasonVaultUnavailable, err)
	}
	if err := w.vault.Unseal(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()

	var recovered time.Duration
	for {
		err := converged(ctx, w, want)
		if err == nil {
			recovered = time.Since(back)
			break
		}
		if time.Since(back) > 30*time.Second {
			t.Fatalf("not all in step 30 s after Vault came back: %v\nmanager log:\n%s", err, m.LogTail(20))
		}
		time.Sleep(250 * time.Millisecond)
	}
	if m.Exited() {
		t.Fatalf("the manager exited during the outage:\n%s", m.LogTail(30))
	}
	if strings.Contains(m.Log(), "panic") {
		t.Fatalf("the manager panicked during the outage:\n%s", m.LogTail(30))
	}
	metrics, err := m.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	probes := harness.Sum(metrics, "vko_vault_requests_total", map[string]string{"operation": "health"})
	t.Logf("R1: %d VaultApps changed in the first %s of a %s outage (%s stopped, %s sealed); all said %s %s into it; "+
		"Vault was probed %.0f times; all in step %s after it came back, nothing lost or left over",
		len(want), changed.Round(time.Millisecond), down+sealed, down, sealed, vaultv1beta1.ReasonVaultUnavailable,
		told.Round(time.Millisecond), probes, recovered.Round(time.Millisecond))
}

// countReason counts the resources of list's kind in namespace team whose
// Ready condition has reason for their current generation.
func countReason(ctx context.Context, c client.Client, list client.ObjectList, reason string) (int, error) {
	if err := c.List(ctx, list, client.InNamespace("team")); err != nil {
		return 0, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, item := range items {
		data, err := json.Marshal(item)
		if err != nil {
			return 0, err
		}
		var o struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Status   struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if err := json.Unmarshal(data, &o); err != nil {
			return 0, err
		}
		if r := meta.FindStatusCondition(o.Status.Conditions, vaultv1beta1.TypeReady); r != nil && r.Reason == reason && r.ObservedGeneration == o.Metadata.Generation {
			n++
		}
	}
	return n, nil
}
