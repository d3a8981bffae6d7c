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
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// The tenant's burst: credentials each writing into every one of the
// consenting namespaces, one Created Event per Secret, all recorded within
// a second or two: far past the Events' burst (100) and pace (20/s).
const (
	burstCredentials = 10
	burstNamespaces  = 32 // spec.target.namespaces holds at most 32
)

// TestATenantsBurstDoesNotDelayAnothersEvents: the tenant's credentials
// write 320 Secrets at once; another team then creates a VaultApp. Its
// Created Event is written as soon as it is recorded, ahead of the
// tenant's Events recorded before it and still waiting their turn — judged
// from the Events' own timestamps.
func TestATenantsBurstDoesNotDelayAnothersEvents(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	var targets []string
	for i := range burstNamespaces {
		ns := fmt.Sprintf("%s-burst-%02d", own, i)
		g.Expect(op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: own}}})).To(Succeed())
		targets = append(targets, ns)
	}
	var mine []*secretsv1beta1.KeycloakClientCredential
	t.Cleanup(func() {
		for _, k := range mine {
			_ = op.Client.Delete(ctx, k)
		}
		for _, ns := range targets {
			_ = op.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	})
	var eg errgroup.Group
	for i := range burstCredentials {
		k := credential(own, fmt.Sprintf("burst-%02d", i), appsRealm, "team-a-web")
		k.Spec.Target.Namespaces = targets
		mine = append(mine, k)
		eg.Go(func() error { return tenant.Create(ctx, k) })
	}
	g.Expect(eg.Wait()).To(Succeed())
	// The tenant's Events are under way (the first hundred at once).
	g.Eventually(func() int { return len(createdEvents(t, own, "KeycloakClientCredential", "burst-")) }).WithTimeout(settle).Should(BeNumerically(">=", 100))

	other := vaultApp(victim, "after-the-burst")
	g.Expect(op.Client.Create(ctx, other)).To(Succeed())
	t.Cleanup(func() { _ = op.Client.Delete(ctx, other) })
	var first eventsv1.Event
	g.Eventually(func() bool {
		e := createdEvents(t, victim, "VaultApp", "after-the-burst")
		if len(e) > 0 {
			first = e[0]
		}
		return len(e) > 0
	}).WithTimeout(settle).Should(BeTrue(), "the other team's object got no Created Event")

	// Each Event keeps the time it was recorded (eventTime); the API
	// server stamps when it was written (creationTimestamp, to the second).
	waited := first.CreationTimestamp.Sub(first.EventTime.Time)
	overtaken := 0
	for _, e := range createdEvents(t, own, "KeycloakClientCredential", "burst-") {
		if e.EventTime.Before(&first.EventTime) && e.CreationTimestamp.After(first.CreationTimestamp.Time) {
			overtaken++
		}
	}
	var longest time.Duration
	for _, e := range createdEvents(t, own, "KeycloakClientCredential", "burst-") {
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
		if e.Reason == shared.ReasonCreated && e.Regarding.Kind == kind && len(e.Regarding.Name) >= len(prefix) && e.Regarding.Name[:len(prefix)] == prefix {
			out = append(out, e)
		}
	}
	return out
}
