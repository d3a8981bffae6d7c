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

package multicluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Two clusters without name prefixes, each with its VaultServer on the
// suite's Vault: A holds shop/contested; B's VaultApp of the same name says
// HeldByAnotherCluster and asks for the name in B's registration. At A's
// next check the name is contested: A's role issues tokens of at most five
// minutes, renewals included, and says so; A's VaultApp deleted, its Event
// says how long tokens keep working; B then takes the name, and once B no
// longer asks, A's VaultServer lists nothing contested.
func TestAContestedNamesTokensAreShortLived(t *testing.T) {
	ctx := context.Background()
	a, b := startCluster(t, "cona", ""), startCluster(t, "conb", "")
	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	const policy = "app.shop.contested"
	a.sharedServer(t, "cona", "", "", "secret/data/{namespace}/*")
	a.serverCondition(t, vaultv1beta1.TypeRegistered, metav1.ConditionTrue, vaultv1beta1.ReasonRegistered)
	a.namespace(t, "shop")
	held := a.serverApp(t, "contested")
	a.wait(t, held, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	b.sharedServer(t, "conb", "", "", "secret/data/{namespace}/*")
	b.serverCondition(t, vaultv1beta1.TypeRegistered, metav1.ConditionTrue, vaultv1beta1.ReasonRegistered)
	b.namespace(t, "shop")
	wanting := b.serverApp(t, "contested")
	if msg := b.wait(t, wanting, metav1.ConditionFalse, vaultv1beta1.ReasonHeldByAnotherCluster); !strings.Contains(msg, "belongs to cluster cona") {
		t.Fatalf("B's VaultApp says %q; want cluster cona named", msg)
	}
	// checked makes c's VaultServer check again until done holds: a check
	// may read a cache that has not seen the VaultApp's last change yet,
	// and the next one is five minutes away.
	checked := func(c *cluster, done func() error) {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		for {
			c.recheck(t)
			time.Sleep(3 * time.Second)
			err := done()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
	}
	asked := func(wants bool) {
		t.Helper()
		// B's check comes by itself, at once: its VaultApp turning held by
		// another cluster or no longer (taking the name at the end, where
		// nothing else changes on B's side), or going, queues it.
		harness.Eventually(t, 30*time.Second, func() error {
			reg, err := admin.Sys().GetPolicy(vaultclient.RegistrationName("conb"))
			if err != nil || strings.Contains(reg, " "+policy+"\n") != wants {
				return fmt.Errorf("B's registration does not say it asks for %s: %v (want %v)\n%s", policy, err, wants, reg)
			}
			return nil
		})
		checked(a, func() error {
			var s vaultv1beta1.VaultServer
			if err := a.op.Client.Get(ctx, client.ObjectKey{Name: "shared"}, &s); err != nil {
				return err
			}
			if slices.Contains(s.Status.ContestedPolicies, policy) != wants {
				return fmt.Errorf("A's status.contestedPolicies = %v (want %s there: %v)", s.Status.ContestedPolicies, policy, wants)
			}
			return nil
		})
	}
	roleTTLs := func(ttl, maxTTL string) {
		t.Helper()
		harness.Eventually(t, 30*time.Second, func() error {
			role, err := admin.Logical().Read("auth/" + a.mount + "/role/" + policy)
			if err != nil || role == nil {
				return fmt.Errorf("read A's role: %v", err)
			}
			if got, gotMax := fmt.Sprint(role.Data["token_ttl"]), fmt.Sprint(role.Data["token_max_ttl"]); got != ttl || gotMax != maxTTL {
				return fmt.Errorf("A's role: token_ttl %s, token_max_ttl %s; want %s and %s", got, gotMax, ttl, maxTTL)
			}
			return nil
		})
	}
	asked(true)
	roleTTLs("300", "300")
	var app vaultv1beta1.VaultApp
	harness.Eventually(t, 10*time.Second, func() error {
		if err := a.op.Client.Get(ctx, held, &app); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeRoleSynced); c == nil || !strings.Contains(c.Message, "its tokens live at most 5m0s") {
			return fmt.Errorf("A's RoleSynced: %+v", c)
		}
		return nil
	})
	token := a.workload(t, held)
	self, err := token.Auth().Token().LookupSelf()
	if err != nil {
		t.Fatal(err)
	}
	if ttl, _ := self.TokenTTL(); ttl > vaultv1beta1.ContestedTokenTTL {
		t.Fatalf("a token of the contested role lives %s", ttl)
	}

	// B's VaultApp goes: A's role gets the spec's TTLs back; it comes
	// again: bounded again.
	b.deleteApp(t, wanting)
	asked(false)
	roleTTLs("3600", "86400")
	wanting = b.serverAppAgain(t, "contested")
	b.wait(t, wanting, metav1.ConditionFalse, vaultv1beta1.ReasonHeldByAnotherCluster)
	asked(true)
	roleTTLs("300", "300")

	a.deleteApp(t, held)
	harness.Eventually(t, 10*time.Second, func() error {
		notes := a.op.Events(t, "shop", "contested")[vaultv1beta1.ReasonDeleted]
		if !slices.ContainsFunc(notes, func(n string) bool {
			return strings.Contains(n, "asks for policy "+policy) && strings.Contains(n, "at most 5m0s")
		}) {
			return fmt.Errorf("A's deletion Events %v do not say how long tokens keep working", notes)
		}
		return nil
	})

	// B takes the name at its next refresh, and asks for nothing more.
	if err := b.op.Client.Get(ctx, wanting, &app); err != nil {
		t.Fatal(err)
	}
	app.Annotations = map[string]string{vaultv1beta1.RefreshRequestAnnotation: "after-a"}
	if err := b.op.Client.Update(ctx, &app); err != nil {
		t.Fatal(err)
	}
	b.wait(t, wanting, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if mark := vaultclient.MarkOf(vaultState(t)["policy "+policy]); mark.Owner.Cluster != "conb" {
		t.Fatalf("%s is marked %+v, want cluster conb's", policy, mark)
	}
	asked(false)
}

// serverAppAgain creates VaultApp shop/<name> on "shared" again, its
// ServiceAccount kept from the first.
func (c *cluster) serverAppAgain(t *testing.T, name string) client.ObjectKey {
	t.Helper()
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{
			ServerRef:      &vaultv1beta1.ServerReference{Name: "shared"},
			Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: name + "/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{name}},
		},
	}
	if err := c.op.Client.Create(context.Background(), app); err != nil {
		t.Fatalf("%s: create VaultApp: %v", c.name, err)
	}
	return client.ObjectKeyFromObject(app)
}
