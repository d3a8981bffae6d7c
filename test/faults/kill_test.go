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
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R3: the manager is SIGKILLed at a random moment while VaultApps and
// KeycloakClientCredentials are created, updated and deleted, 30 times
// over. After a last restart every object converges: each is Ready for its
// spec, none is stuck in deletion, Vault holds exactly one policy and one
// role per VaultApp, at its spec, and the operator's Secrets are exactly
// those of the live credentials, holding their client's secret (nothing
// orphaned or stray, nothing missing).
func TestManagerKilledAtRandomEverythingConverges(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	const trials = 30
	var (
		mu    sync.Mutex
		alive = map[string]bool{} // VaultApps that exist, by name
		next  int
		kccs  = map[string]bool{} // KeycloakClientCredentials that exist, by name
	)
	start := func(trial int) *harness.Manager {
		return w.startManager(t, fmt.Sprintf("manager-%02d", trial), w.vault.Addr)
	}
	// The admin's KeycloakServer needs the webhooks of a running manager.
	setup := w.startManager(t, "manager-setup", w.vault.Addr)
	_, clientSecrets := w.withKeycloak(t, "faults-r3", "r3-client", 2, "team")
	setup.Stop()
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
				if rand.IntN(2) == 0 {
					churnCredential(ctx, w, &mu, kccs, &next)
					continue
				}
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
	want, wantCredentials := maps.Clone(alive), maps.Clone(kccs)
	mu.Unlock()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := errors.Join(converged(ctx, w, want), credentialsConverged(ctx, w, wantCredentials, clientSecrets))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d kills, not converged 90 s after the last restart: %v\nmanager log:\n%s", trials, err, m.LogTail(20))
		}
		time.Sleep(time.Second)
	}
	t.Logf("R3: %d kills (after %v), %d objects created in all, %d VaultApps and %d KeycloakClientCredentials alive; "+
		"all converged, Vault holds exactly the VaultApps' policies and roles, the operator's Secrets are exactly the credentials'",
		trials, killedAt, next, len(want), len(wantCredentials))
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
		name := tenancy.PolicyName("", "team", app.Name)
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

// churnCredential creates, updates or deletes one KeycloakClientCredential
// of namespace team (its Secret goes to team), recording which exist.
func churnCredential(ctx context.Context, w *world, mu *sync.Mutex, kccs map[string]bool, next *int) {
	mu.Lock()
	names := slices.Sorted(maps.Keys(kccs))
	mu.Unlock()
	switch op := rand.IntN(3); {
	case op == 0 || len(names) < 5:
		mu.Lock()
		name := fmt.Sprintf("kcc-%03d", *next)
		*next++
		mu.Unlock()
		kcc := &secretsv1beta1.KeycloakClientCredential{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
			Spec: secretsv1beta1.KeycloakClientCredentialSpec{
				Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "sso"}, Realm: "faults-r3", ClientID: "r3-client-00"},
				Target: secretsv1beta1.TargetSpec{SecretName: name + "-creds"},
			},
		}
		if err := w.c.Create(ctx, kcc); err == nil {
			mu.Lock()
			kccs[name] = true
			mu.Unlock()
		}
	case op == 1:
		kcc := &secretsv1beta1.KeycloakClientCredential{}
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: "team", Name: names[rand.IntN(len(names))]}, kcc); err == nil && kcc.DeletionTimestamp.IsZero() {
			kcc.Spec.Source.ClientID = fmt.Sprintf("r3-client-%02d", rand.IntN(2))
			_ = w.c.Update(ctx, kcc)
		}
	default:
		name := names[rand.IntN(len(names))]
		if err := w.c.Delete(ctx, &secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"}}); err == nil {
			mu.Lock()
			delete(kccs, name)
			mu.Unlock()
		}
	}
}

// credentialsConverged says what still differs from the promise: every
// KeycloakClientCredential of want Ready for its spec, no other (none stuck
// in deletion), and the Secrets the operator labels in team exactly theirs,
// each holding its client's secret.
func credentialsConverged(ctx context.Context, w *world, want map[string]bool, clientSecrets map[string]string) error {
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := w.c.List(ctx, &list, client.InNamespace("team")); err != nil {
		return err
	}
	clientOf := map[string]string{}
	for _, kcc := range list.Items {
		if !want[kcc.Name] {
			return fmt.Errorf("KeycloakClientCredential %s still exists (deletion stuck?): finalizers %v", kcc.Name, kcc.Finalizers)
		}
		if !harness.ReadyFor(kcc.Status.Conditions, kcc.Generation) {
			return fmt.Errorf("KeycloakClientCredential %s not Ready for generation %d: %v", kcc.Name, kcc.Generation, kcc.Status.Conditions)
		}
		clientOf[kcc.Name+"-creds"] = kcc.Spec.Source.ClientID
	}
	if len(clientOf) != len(want) {
		return fmt.Errorf("%d KeycloakClientCredentials exist, %d were never deleted", len(clientOf), len(want))
	}
	var secrets corev1.SecretList
	if err := w.c.List(ctx, &secrets, client.InNamespace("team"), client.MatchingLabels{secretscontroller.ManagedByLabel: secretscontroller.ManagedByValue}); err != nil {
		return err
	}
	for _, s := range secrets.Items {
		id, ok := clientOf[s.Name]
		if !ok {
			return fmt.Errorf("stray Secret %s: its KeycloakClientCredential is gone", s.Name)
		}
		if string(s.Data["clientSecret"]) != clientSecrets[id] {
			return fmt.Errorf("Secret %s does not hold the secret of its client %s", s.Name, id)
		}
		delete(clientOf, s.Name)
	}
	if len(clientOf) > 0 {
		return fmt.Errorf("%d Secrets missing, e.g. %v", len(clientOf), slices.Sorted(maps.Keys(clientOf))[0])
	}
	return nil
}
