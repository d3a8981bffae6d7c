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
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R6: a rotation with a grace period survives the faults: the manager
// killed at each step (before Keycloak gets the regeneration, after
// Keycloak made it but before the operator heard, in the grace period,
// after Keycloak invalidated the previous secret but before the operator
// heard), Keycloak down right after the regeneration, and a target
// namespace withdrawing its consent meanwhile. Afterwards: exactly one
// regeneration, every consenting target holds Keycloak's secret, the
// previous secret was invalidated only once the grace had passed since the
// last target was written, and it no longer logs in.

// rotationKeycloak is the shared Keycloak seen through a proxy that tells
// the rotation's requests apart (and can stop the operator between two).
type rotationKeycloak struct {
	proxy *harness.CountingProxy
	link  *harness.Link
	realm string
}

func classifyRotation(r *http.Request) string {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/client-secret"):
		return "regenerate"
	case r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/client-secret/rotated"):
		return "invalidate"
	}
	return "other"
}

// withRotatingKeycloak does the admins' part: a realm that rotates with
// grace (an hour), clients <prefix>-NN, namespace "team2" consenting to
// "team", and KeycloakServer "sso-rot" granting both namespaces reading and
// rotating them, through the proxy.
func (w *world) withRotatingKeycloak(t *testing.T, realm, prefix string, clients int) *rotationKeycloak {
	t.Helper()
	ctx := context.Background()
	link, _ := w.withKeycloak(t, realm, prefix, clients, "team", "team2")
	kc, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.RotateWithGrace(ctx, realm, time.Hour); err != nil {
		t.Fatal(err)
	}
	proxy, err := harness.StartCountingProxy("http://"+link.Addr, classifyRotation)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team2", Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: "team"}}},
		&secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "sso-rot"}, Spec: secretsv1beta1.KeycloakServerSpec{
			URL: proxy.URL, Realm: "master", AuthType: secretsv1beta1.AuthClientCredentials,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-credentials"},
			Access: []secretsv1beta1.AccessGrant{{Namespaces: []string{"team"}, Realms: []string{realm},
				ClientIDs: []string{prefix + "-*"}, Rotate: true}},
		}},
	} {
		if err := w.c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return &rotationKeycloak{proxy: proxy, link: link, realm: realm}
}

// rotatingCredential reads clientID into Secret "<name>-creds" in team and
// team2, rotated on request with a grace of a minute.
func rotatingCredential(name, realm, clientID string) *secretsv1beta1.KeycloakClientCredential {
	return &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "sso-rot"}, Realm: realm, ClientID: clientID},
			Target: secretsv1beta1.TargetSpec{SecretName: name + "-creds", Namespaces: []string{"team", "team2"},
				Keys: secretsv1beta1.SecretKeys{ClientID: "key", ClientSecret: "secret", PreviousClientSecret: "previous"}},
			RefreshInterval: &metav1.Duration{Duration: time.Hour},
			Rotation:        &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute}},
		},
	}
}

// ledger records the rotation's requests Keycloak answered.
type ledger struct {
	mu            sync.Mutex
	regenerations int
	invalidatedAt []time.Time
}

func (l *ledger) watch(r *http.Request, status int) {
	if status >= 300 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch classifyRotation(r) {
	case "regenerate":
		l.regenerations++
	case "invalidate":
		l.invalidatedAt = append(l.invalidatedAt, time.Now())
	}
}

// managers runs one manager at a time; kill ends the current one, and
// restart starts the next once it is gone.
type managers struct {
	w   *world
	t   *testing.T
	mu  sync.Mutex
	cur *harness.Manager
	n   int
}

func (ms *managers) start() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.cur = ms.w.startManager(ms.t, fmt.Sprintf("manager-r6-%02d", ms.n), ms.w.vault.Addr)
	ms.n++
}

func (ms *managers) kill() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.cur.Kill()
}

func (ms *managers) restartIfDead() bool {
	ms.mu.Lock()
	dead := ms.cur.Exited()
	ms.mu.Unlock()
	if dead {
		ms.start()
	}
	return dead
}

func (ms *managers) stop() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.cur.Stop()
}

// startRotation: a world, its manager, the rotating Keycloak, and a
// credential of client <prefix>-00 in sync.
func startRotation(t *testing.T, realm, prefix, name string) (*world, *managers, *rotationKeycloak, client.ObjectKey) {
	t.Helper()
	w := newWorld(t)
	ms := &managers{w: w, t: t}
	ms.start()
	kc := w.withRotatingKeycloak(t, realm, prefix, 1)
	k := rotatingCredential(name, kc.realm, prefix+"-00")
	if err := w.c.Create(context.Background(), k); err != nil {
		ms.stop()
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(k)
	waitSynced(t, w, key)
	return w, ms, kc, key
}

func TestRotationSurvivesAKillAtEachStep(t *testing.T) {
	w, ms, kc, key := startRotation(t, "faults-r6", "r6-client", "kills")
	defer ms.stop()
	clientID := "r6-client-00"
	before := keycloakSecret(t, kc.realm, clientID)

	var l ledger
	var once [3]sync.Once
	// 1: the regeneration never reaches Keycloak; the manager dies first.
	kc.proxy.OnRequest(func(r *http.Request) bool {
		drop := false
		if classifyRotation(r) == "regenerate" {
			once[0].Do(func() { ms.kill(); drop = true })
		}
		return drop
	})
	kc.proxy.OnAnswer(func(r *http.Request, status int) {
		l.watch(r, status)
		switch classifyRotation(r) {
		case "regenerate": // 2: Keycloak regenerated; the manager never hears it
			once[1].Do(ms.kill)
		case "invalidate": // 4: Keycloak invalidated; the manager never hears it
			once[2].Do(ms.kill)
		}
	})
	askRotation(t, w, key, "r6-kills")

	killedInGrace := false
	deadline := time.Now().Add(4 * time.Minute)
	for restarts := 0; ; {
		got := credentialOf(t, w, key)
		rot := got.Status.Rotation
		if rot != nil && rot.Phase == secretsv1beta1.RotationGracePeriod && !killedInGrace {
			ms.kill() // 3: in the grace period
			killedInGrace = true
		}
		if ms.restartIfDead() {
			restarts++
		}
		if rot != nil && rot.Phase == secretsv1beta1.RotationCompleted && restarts >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotation did not complete after %d restarts: %+v", restarts, rot)
		}
		time.Sleep(100 * time.Millisecond)
	}
	assertOneRotation(t, w, kc, &l, key, clientID, before, "team", "team2")
}

// TestRotationSurvivesKeycloakDownAndAWithdrawnConsent: Keycloak stops
// answering right after it regenerated the secret, and team2 withdraws its
// consent while it is down; the rotation completes once Keycloak is back,
// waiting for team alone.
func TestRotationSurvivesKeycloakDownAndAWithdrawnConsent(t *testing.T) {
	ctx := context.Background()
	w, ms, kc, key := startRotation(t, "faults-r6b", "r6b-client", "outage")
	defer ms.stop()
	clientID := "r6b-client-00"
	before := keycloakSecret(t, kc.realm, clientID)

	var l ledger
	var cut sync.Once
	kc.proxy.OnAnswer(func(r *http.Request, status int) {
		l.watch(r, status)
		if classifyRotation(r) == "regenerate" {
			cut.Do(kc.link.Cut)
		}
	})
	askRotation(t, w, key, "r6-outage")
	deadline := time.Now().Add(30 * time.Second)
	for credentialOf(t, w, key).Status.Rotation == nil || l.count() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the rotation did not regenerate the secret")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ns corev1.Namespace
		if err := w.c.Get(ctx, client.ObjectKey{Name: "team2"}, &ns); err != nil {
			return err
		}
		delete(ns.Annotations, tenancy.AllowedSourceNamespacesAnnotation)
		return w.c.Update(ctx, &ns)
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	if phase := credentialOf(t, w, key).Status.Rotation.Phase; phase != secretsv1beta1.RotationRegenerating && phase != secretsv1beta1.RotationDistributing {
		t.Fatalf("with Keycloak down the rotation went on to %s", phase)
	}
	kc.link.Restore()
	deadline = time.Now().Add(3 * time.Minute)
	for {
		rot := credentialOf(t, w, key).Status.Rotation
		if rot.Phase == secretsv1beta1.RotationCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotation did not complete once Keycloak was back: %+v", rot)
		}
		time.Sleep(200 * time.Millisecond)
	}
	assertOneRotation(t, w, kc, &l, key, clientID, before, "team")
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.regenerations
}

// assertOneRotation: one regeneration; every consenting target holds
// Keycloak's secret and no longer the previous one; the previous secret was
// invalidated after the grace (counted from the last target written) and
// does not log in.
func assertOneRotation(t *testing.T, w *world, kc *rotationKeycloak, l *ledger, key client.ObjectKey, clientID, before string, targets ...string) {
	t.Helper()
	got := credentialOf(t, w, key)
	rot := got.Status.Rotation
	l.mu.Lock()
	regenerations, invalidated := l.regenerations, append([]time.Time(nil), l.invalidatedAt...)
	l.mu.Unlock()
	if regenerations != 1 {
		t.Fatalf("Keycloak regenerated the secret %d times, want once", regenerations)
	}
	if len(invalidated) == 0 || invalidated[0].Before(rot.DistributedTime.Add(time.Minute)) {
		t.Fatalf("previous secret invalidated at %v, want after the grace ended (%s)", invalidated, rot.DistributedTime.Add(time.Minute))
	}
	current := keycloakSecret(t, kc.realm, clientID)
	if current == before {
		t.Fatal("Keycloak's secret did not change")
	}
	for _, ns := range targets {
		var s corev1.Secret
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: key.Name + "-creds"}, &s)
			_, hasPrevious := s.Data["previous"]
			if err == nil && string(s.Data["secret"]) == current && !hasPrevious {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Secret %s/%s-creds does not hold only Keycloak's current secret (err %v, previous key kept: %v)", ns, key.Name, err, hasPrevious)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	kcs, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gocloak.NewClient(kcs.URL).LoginClient(context.Background(), clientID, before, kc.realm); err == nil {
		t.Fatal("the previous secret still logs in after the rotation completed")
	}
	if _, err := gocloak.NewClient(kcs.URL).LoginClient(context.Background(), clientID, current, kc.realm); err != nil {
		t.Fatalf("the current secret does not log in: %v", err)
	}
}

func credentialOf(t *testing.T, w *world, key client.ObjectKey) *secretsv1beta1.KeycloakClientCredential {
	t.Helper()
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.c.Get(context.Background(), key, &k); err != nil {
		t.Fatal(err)
	}
	return &k
}

func waitSynced(t *testing.T, w *world, key client.ObjectKey) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !harness.ReadyFor(credentialOf(t, w, key).Status.Conditions, credentialOf(t, w, key).Generation) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not Ready: %+v", key, credentialOf(t, w, key).Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func askRotation(t *testing.T, w *world, key client.ObjectKey, id string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		k := credentialOf(t, w, key)
		if k.Annotations == nil {
			k.Annotations = map[string]string{}
		}
		k.Annotations[secretsv1beta1.RotationRequestAnnotation] = id
		return w.c.Update(context.Background(), k)
	}); err != nil {
		t.Fatal(err)
	}
}

// keycloakSecret is the client's current secret, as Keycloak's admin reads it.
func keycloakSecret(t *testing.T, realm, clientID string) string {
	t.Helper()
	ctx := context.Background()
	kc, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := admin.ClientSecret(ctx, realm, clientID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
