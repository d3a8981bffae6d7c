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

package tenancy

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
)

// burst is how many VaultApps the tenant creates at once: with the
// manager's 8 workers their Created Events are recorded far faster than
// the Events' pace, which this suite slows to eventPace so that they do
// on a busy machine too.
const burst = 300

var eventPace = manager.EventPace{PerSecond: 5, Burst: 20}

// TestATenantsBurstDoesNotDelayAnothersEvents: the tenant creates 300
// VaultApps at once; another team then creates a credential (reconciled by
// its own controller, so at once). Its Created Event is written as soon as
// it is recorded, ahead of the tenant's Events recorded before it and
// still waiting their turn — judged from the Events' own timestamps.
func TestATenantsBurstDoesNotDelayAnothersEvents(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	burstLabel := map[string]string{"tenancy-test/burst": "true"}
	t.Cleanup(func() {
		_ = op.Client.DeleteAllOf(ctx, &vaultv1beta1.VaultApp{}, client.InNamespace(own), client.MatchingLabels(burstLabel))
	})
	var eg errgroup.Group
	eg.SetLimit(32)
	for i := range burst {
		eg.Go(func() error {
			a := vaultApp(own, fmt.Sprintf("burst-%03d", i))
			a.Labels = burstLabel
			return tenant.Create(ctx, a)
		})
	}
	g.Expect(eg.Wait()).To(Succeed())
	// The other team acts while the tenant's Events wait for their turn:
	// once 20 more of the tenant's VaultApps are reconciled (each records
	// its Created Event in that pass) than their Events written.
	g.Eventually(func() int {
		var list vaultv1beta1.VaultAppList
		g.Expect(op.Client.List(ctx, &list, client.InNamespace(own), client.MatchingLabels(burstLabel))).To(Succeed())
		ready := 0
		for _, a := range list.Items {
			if meta.IsStatusConditionTrue(a.Status.Conditions, vaultv1beta1.TypeReady) {
				ready++
			}
		}
		return ready - len(createdEvents(t, own, "VaultApp", "burst-"))
	}).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).Should(BeNumerically(">=", 20),
		"the tenant's VaultApps were never reconciled faster than their Events are written: nothing waits, the test can show nothing")

	other := credential(victim, "after-the-burst", appsRealm, "team-b-web")
	other.Spec.Target.Namespaces = []string{victim}
	g.Expect(op.Client.Create(ctx, other)).To(Succeed())
	t.Cleanup(func() { _ = op.Client.Delete(ctx, other) })
	var first eventsv1.Event
	g.Eventually(func() bool {
		e := createdEvents(t, victim, "KeycloakClientCredential", "after-the-burst")
		if len(e) > 0 {
			first = e[0]
		}
		return len(e) > 0
	}).WithTimeout(settle).Should(BeTrue(), "the other team's object got no Created Event")

	// Every Event of the tenant's written, the order is known.
	g.Eventually(func() int { return len(createdEvents(t, own, "VaultApp", "burst-")) }).
		WithTimeout(time.Duration(burst/eventPace.PerSecond+30) * time.Second).Should(Equal(burst))

	// Each Event keeps the time it was recorded (eventTime); the API
	// server stamps when it was written (creationTimestamp, to the second).
	waited := first.CreationTimestamp.Sub(first.EventTime.Time)
	overtaken := 0
	for _, e := range createdEvents(t, own, "VaultApp", "burst-") {
		if e.EventTime.Before(&first.EventTime) && e.CreationTimestamp.After(first.CreationTimestamp.Time) {
			overtaken++
		}
	}
	var longest time.Duration
	for _, e := range createdEvents(t, own, "VaultApp", "burst-") {
		longest = max(longest, e.CreationTimestamp.Sub(e.EventTime.Time))
	}
	t.Logf("the other team's first Event was written %s after it was recorded, ahead of %d of the tenant's recorded before it; the tenant's waited up to %s",
		waited, overtaken, longest)
	g.Expect(waited).To(BeNumerically("<", 2*time.Second), "the other team's first Event waited for its turn behind the tenant's burst")
	g.Expect(overtaken).To(BeNumerically(">", 0),
		"no Event of the tenant's burst was still waiting when the other team's was recorded: the test proves nothing")
}

// createdEvents are the Created Events about objects of kind whose name
// starts with prefix, in namespace.
func createdEvents(t *testing.T, namespace, kind, prefix string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := op.Client.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Reason == vaultv1beta1.ReasonCreated /* the same word in both groups */ && e.Regarding.Kind == kind && len(e.Regarding.Name) >= len(prefix) && e.Regarding.Name[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	return out
}
