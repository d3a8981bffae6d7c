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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R2: the Keycloak server is unreachable for 60 s while 300
// KeycloakClientCredentials sync (a third of them change their spec during
// the outage, so they must read Keycloak and cannot). Promises: no target
// Secret is blanked, deleted or loses its secret at any moment; the
// changed ones say Ready=False KeycloakUnavailable; all are Ready for
// their spec within 30 s of Keycloak's return (the manager runs with the
// default --max-backoff of 2 minutes).
//
// The shared Keycloak serves other suites at the same time, so it is not
// stopped: the manager reaches it through a Link that the test cuts, which
// the operator sees as a stopped server behind a load balancer.
func TestKeycloakDownForAMinute(t *testing.T) {
	const (
		resources = 300
		clients   = 30
		changed   = 100 // of the resources, change their spec during the outage
		down      = 60 * time.Second
		realm     = "faults-r2"
	)
	ctx := context.Background()
	w := newWorld(t)
	m := w.startManager(t, "manager", w.vault.Addr)
	defer m.Stop()
	link, secrets := w.withKeycloak(t, realm, "r2-client", clients, "team")

	clientOf := func(i int) string { return fmt.Sprintf("r2-client-%02d", i%clients) }
	for i := range resources {
		kcc := &secretsv1beta1.KeycloakClientCredential{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kcc-%03d", i), Namespace: "team"},
			Spec: secretsv1beta1.KeycloakClientCredentialSpec{
				Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "sso"}, Realm: realm, ClientID: clientOf(i)},
				Target: secretsv1beta1.TargetSpec{SecretName: fmt.Sprintf("kcc-%03d-creds", i)},
				// The shortest refresh: refreshes fall due during the outage too.
				RefreshInterval: &metav1.Duration{Duration: 30 * time.Second},
			},
		}
		if err := w.c.Create(ctx, kcc); err != nil {
			t.Fatal(err)
		}
	}
	waitCredentials(t, w.c, resources, 3*time.Minute)
	// intact checks every target Secret holds its client's secret.
	intact := func() error {
		var list corev1.SecretList
		if err := w.c.List(ctx, &list, client.InNamespace("team")); err != nil {
			return err
		}
		have := map[string]string{}
		for _, s := range list.Items {
			have[s.Name] = string(s.Data["clientSecret"])
		}
		for i := range resources {
			name := fmt.Sprintf("kcc-%03d-creds", i)
			if got, ok := have[name]; !ok || got != secrets[clientOf(i)] {
				return fmt.Errorf("Secret %s is gone or does not hold its client's secret (present %v, %d bytes)", name, ok, len(got))
			}
		}
		return nil
	}
	if err := intact(); err != nil {
		t.Fatal(err)
	}

	link.Cut()
	outageStart := time.Now()
	for i := range changed {
		name := fmt.Sprintf("kcc-%03d", i)
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			kcc := &secretsv1beta1.KeycloakClientCredential{}
			if err := w.c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, kcc); err != nil {
				return err
			}
			kcc.Spec.Target.Labels = map[string]string{"outage": "changed"}
			return w.c.Update(ctx, kcc)
		}); err != nil {
			t.Fatal(err)
		}
	}
	var told time.Duration
	checks := 0
	for time.Since(outageStart) < down {
		if err := intact(); err != nil {
			t.Fatalf("%s into the outage: %v", time.Since(outageStart).Round(time.Millisecond), err)
		}
		checks++
		if told == 0 {
			n, err := countReason(ctx, w.c, &secretsv1beta1.KeycloakClientCredentialList{}, secretsv1beta1.ReasonKeycloakUnavailable)
			if err != nil {
				t.Fatal(err)
			}
			if n >= changed {
				told = time.Since(outageStart)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if told == 0 {
		t.Fatalf("the %d resources changed during the outage did not all say %s", changed, secretsv1beta1.ReasonKeycloakUnavailable)
	}
	link.Restore()
	back := time.Now()
	waitCredentials(t, w.c, resources, 30*time.Second)
	recovered := time.Since(back)
	if err := intact(); err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "kcc-000-creds"}, &s); err != nil || s.Labels["outage"] != "changed" {
		t.Fatalf("the change made during the outage is not on the Secret after it: labels %v, %v", s.Labels, err)
	}
	if m.Exited() || strings.Contains(m.Log(), "panic") {
		t.Fatalf("the manager exited or panicked during the outage:\n%s", m.LogTail(30))
	}
	metrics, err := m.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	probes := harness.Sum(metrics, "vko_keycloak_requests_total", map[string]string{"operation": "probe"})
	t.Logf("R2: %d resources, %d changed during a %s outage; every Secret intact at each of %d checks; the changed ones said %s %s into it; "+
		"Keycloak was probed %.0f times; all Ready %s after it came back",
		resources, changed, down, checks, secretsv1beta1.ReasonKeycloakUnavailable, told.Round(time.Millisecond), probes, recovered.Round(time.Millisecond))
}

// waitCredentials waits until n KeycloakClientCredentials in "team" are
// Ready for their current spec.
func waitCredentials(t *testing.T, c client.Client, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var list secretsv1beta1.KeycloakClientCredentialList
		if err := c.List(context.Background(), &list, client.InNamespace("team")); err != nil {
			t.Fatal(err)
		}
		ready, notReady := 0, ""
		for _, kcc := range list.Items {
			if harness.ReadyFor(kcc.Status.Conditions, kcc.Generation) {
				ready++
			} else if notReady == "" {
				notReady = fmt.Sprintf("%s: %v", kcc.Name, kcc.Status.Conditions)
			}
		}
		if ready == n && len(list.Items) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d KeycloakClientCredentials Ready after %s; first not Ready: %s", ready, n, timeout, notReady)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
