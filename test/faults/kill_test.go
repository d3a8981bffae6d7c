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
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R3: the manager is SIGKILLed at a random moment while VaultApps are
// created, updated and deleted, 30 times over. After a last restart every
// object converges: each VaultApp is Ready for its spec, none is stuck in
// deletion, and Vault holds exactly one policy and one role per VaultApp,
// at its spec (nothing orphaned, nothing missing).
func TestManagerKilledAtRandomEverythingConverges(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	const trials = 30
	var (
		mu    sync.Mutex
		alive = map[string]bool{} // VaultApps that exist, by name
		next  int
	)
	start := func(trial int) *harness.Manager {
		return w.startManager(t, fmt.Sprintf("manager-%02d", trial), w.vault.Addr)
	}
	var killedAt []time.Duration
	for trial := range trials {
		m := start(trial)
		// Creates, spec updates and deletes at once; some are refused
		// once the manager (which serves the webhooks) is gone.
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				names := make([]string, 0, len(alive))
				for n := range alive {
					names = append(names, n)
				}
				slices.Sort(names)
				mu.Unlock()
				switch op := rand.IntN(3); {
				case op == 0 || len(names) < 5:
					mu.Lock()
					name := fmt.Sprintf("app-%03d", next)
					next++
					mu.Unlock()
					if err := w.c.Create(ctx, vaultApp(name, "db/*")); err == nil {
						mu.Lock()
						alive[name] = true
						mu.Unlock()
					}
				case op == 1:
					app := &vaultv1beta1.VaultApp{}
					if err := w.c.Get(ctx, client.ObjectKey{Namespace: "team", Name: names[rand.IntN(len(names))]}, app); err == nil && app.DeletionTimestamp.IsZero() {
						app.Spec.Policy.Rules[0].Path = fmt.Sprintf("p%d/*", rand.IntN(100))
						_ = w.c.Update(ctx, app)
					}
				default:
					name := names[rand.IntN(len(names))]
					if err := w.c.Delete(ctx, vaultApp(name, "")); err == nil {
						mu.Lock()
						delete(alive, name)
						mu.Unlock()
					}
				}
			}
		})
		after := time.Duration(rand.IntN(1500)) * time.Millisecond
		time.Sleep(after)
		m.Kill()
		close(stop)
		wg.Wait()
		killedAt = append(killedAt, after)
	}

	// The last manager finds whatever the kills left, and puts it right.
	m := start(trials)
	defer m.Stop()
	mu.Lock()
	want := maps.Clone(alive)
	mu.Unlock()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := converged(ctx, w, want)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d kills, not converged 90 s after the last restart: %v\nmanager log:\n%s", trials, err, m.LogTail(20))
		}
		time.Sleep(time.Second)
	}
	t.Logf("R3: %d kills (after %v), %d VaultApps created in all, %d alive; all converged, Vault holds exactly theirs",
		trials, killedAt, next, len(want))
}

// converged says what still differs from the promise: every VaultApp of
// want Ready for its spec, no other VaultApp (none stuck in deletion), and
// in Vault one policy per VaultApp, at its spec, and no other app.* policy.
func converged(ctx context.Context, w *world, want map[string]bool) error {
	var list vaultv1beta1.VaultAppList
	if err := w.c.List(ctx, &list, client.InNamespace("team")); err != nil {
		return err
	}
	admin, err := w.vault.AdminClient()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, app := range list.Items {
		if !want[app.Name] {
			return fmt.Errorf("VaultApp %s still exists (deletion stuck?): finalizers %v", app.Name, app.Finalizers)
		}
		seen[app.Name] = true
		if !harness.ReadyFor(app.Status.Conditions, app.Generation) {
			return fmt.Errorf("VaultApp %s not Ready for generation %d: %v", app.Name, app.Generation, app.Status.Conditions)
		}
		name := tenancy.PolicyName("team", app.Name)
		text, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil || !strings.Contains(text, "secret/data/team/"+app.Spec.Policy.Rules[0].Path) {
			return fmt.Errorf("policy of %s is not at its spec (%s): %v", app.Name, app.Spec.Policy.Rules[0].Path, err)
		}
		role, err := admin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+name)
		if err != nil || role == nil {
			return fmt.Errorf("role of %s is missing: %v", app.Name, err)
		}
	}
	for name := range want {
		if !seen[name] {
			return fmt.Errorf("VaultApp %s is gone, but was never deleted", name)
		}
	}
	policies, err := admin.Sys().ListPoliciesWithContext(ctx)
	if err != nil {
		return err
	}
	for _, p := range policies {
		if name, ok := strings.CutPrefix(p, "app.team."); ok && !want[name] {
			return fmt.Errorf("policy %s is left in Vault for a deleted VaultApp (orphan)", p)
		}
	}
	roles, err := admin.Logical().ListWithContext(ctx, "auth/kubernetes/role")
	if err != nil {
		return err
	}
	if roles != nil {
		for _, k := range roles.Data["keys"].([]any) {
			if name, ok := strings.CutPrefix(k.(string), "app.team."); ok && !want[name] {
				return fmt.Errorf("role %s is left in Vault for a deleted VaultApp (orphan)", k)
			}
		}
	}
	return nil
}
