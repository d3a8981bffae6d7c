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

package keycloak_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// podDelay is how long after a Secret changes the consumer sees the change,
// as a pod sees a mounted Secret after the kubelet's next sync.
const podDelay = 15 * time.Second

// consume starts a consumer of Secret ns/name logging in five times a
// second; newSecret, once set, is the secret it should end on.
func consume(t *testing.T, ns, name, realmName string, newSecret *atomic.Value) *harness.Consumer {
	t.Helper()
	c, err := harness.StartConsumer(context.Background(), harness.ConsumerOptions{
		Reader: op.Client, KeycloakURL: kc.URL, Realm: realmName, Secret: client.ObjectKey{Namespace: ns, Name: name},
		PodDelay: podDelay, Every: 200 * time.Millisecond,
		NewSecret: func() string { s, _ := newSecret.Load().(string); return s },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// changeCredential changes a credential, retried on conflict.
func changeCredential(t *testing.T, key client.ObjectKey, change func(*secretsv1beta1.KeycloakClientCredential)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var k secretsv1beta1.KeycloakClientCredential
		if err := op.Client.Get(context.Background(), key, &k); err != nil {
			return err
		}
		change(&k)
		return op.Client.Update(context.Background(), &k)
	}); err != nil {
		t.Fatal(err)
	}
}

// changeStatus writes the credential's status as an admin would, again
// when the operator wrote it in between.
func changeStatus(t *testing.T, key client.ObjectKey, change func(*secretsv1beta1.KeycloakClientCredential)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var k secretsv1beta1.KeycloakClientCredential
		if err := op.Client.Get(context.Background(), key, &k); err != nil {
			return err
		}
		change(&k)
		return op.Client.Status().Update(context.Background(), &k)
	}); err != nil {
		t.Fatal(err)
	}
}

func rotationOf(t *testing.T, key client.ObjectKey) *secretsv1beta1.RotationStatus {
	var k secretsv1beta1.KeycloakClientCredential
	if err := op.Client.Get(context.Background(), key, &k); err != nil {
		t.Fatal(err)
	}
	return k.Status.Rotation
}

func phaseOf(t *testing.T, key client.ObjectKey) func() string {
	return func() string {
		if r := rotationOf(t, key); r != nil {
			return r.Phase
		}
		return ""
	}
}

// realmRotatingWithGrace makes a realm <prefix>-NNNN whose clients rotate
// with a grace of an hour, as the admin setup has it.
func realmRotatingWithGrace(t *testing.T, prefix string) string {
	t.Helper()
	ctx := context.Background()
	realm := fmt.Sprintf("%s-%04d", prefix, rand.IntN(10000))
	if err := createRealm(ctx, kc, realm); err != nil {
		t.Fatal(err)
	}
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.RotateWithGrace(ctx, realm, time.Hour); err != nil {
		t.Fatal(err)
	}
	return realm
}

// TestRotationWithGraceCostsNoLogin: a rotation on request and a scheduled
// one, in a realm that rotates with grace, each watched by a consumer
// logging in several times a second with a pod's view of its Secret: zero
// failed logins; the previous secret is served under its key during the
// grace and invalidated after it.
func TestRotationWithGraceCostsNoLogin(t *testing.T) {
	ctx := context.Background()
	graceRealm := realmRotatingWithGrace(t, "grace")
	ns := op.NewNamespace(t, nil)
	server := newServerInRealm(t, kc, graceRealm, ns)
	type rotated struct {
		key      client.ObjectKey
		clientID string
		before   string
		after    atomic.Value
		c        *harness.Consumer
	}
	var all []*rotated
	for _, name := range []string{"on-request", "scheduled"} {
		clientID := fmt.Sprintf("%s-%04d", name, rand.IntN(10000))
		if err := createClient(ctx, kc, graceRealm, clientID, ""); err != nil {
			t.Fatal(err)
		}
		k := credential(ns, name, server, clientID)
		k.Spec.Source.Realm = graceRealm
		k.Spec.Target.Keys.PreviousClientSecret = "previous"
		k.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
		k.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute}}
		if name == "scheduled" {
			k.Spec.Rotation.Interval = metav1.Duration{Duration: time.Hour}
		}
		if err := op.Client.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
		before, _ := clientSecretOf(ctx, kc, graceRealm, clientID)
		r := &rotated{key: client.ObjectKeyFromObject(k), clientID: clientID, before: before}
		r.c = consume(t, ns, name+"-creds", graceRealm, &r.after)
		all = append(all, r)
	}
	defer func() {
		for _, r := range all {
			r.c.Stop()
		}
	}()
	time.Sleep(2 * time.Second) // the consumers log in with the first secret

	// One asked for, one due (its last rotation two hours ago; the spec
	// change brings the pass now).
	changeCredential(t, all[0].key, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "grace-1"}
	})
	changeStatus(t, all[1].key, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Status.LastRotationTime = &metav1.Time{Time: time.Now().Add(-2 * time.Hour)}
	})
	changeCredential(t, all[1].key, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.RefreshInterval = &metav1.Duration{Duration: 59 * time.Minute}
	})

	for _, r := range all {
		NewWithT(t).Eventually(phaseOf(t, r.key)).WithTimeout(20*time.Second).Should(Equal(secretsv1beta1.RotationGracePeriod), "%s: not in its grace period", r.key.Name)
		now, _ := clientSecretOf(ctx, kc, graceRealm, r.clientID)
		r.after.Store(now)
		s := secretOf(t, ns, r.key.Name+"-creds")
		NewWithT(t).Expect(now).NotTo(Equal(r.before), "%s: Keycloak's secret did not change", r.key.Name)
		NewWithT(t).Expect(string(s.Data["secret"])).To(Equal(now), "%s: the Secret does not hold the new secret", r.key.Name)
		NewWithT(t).Expect(string(s.Data["previous"])).To(Equal(r.before), "%s: the Secret does not hold the previous secret under its key", r.key.Name)
		for _, reason := range []string{secretsv1beta1.ReasonRotated, secretsv1beta1.ReasonRotationDistributed} {
			op.WaitEvent(t, ns, r.key.Name, reason)
		}
	}
	// The grace ends a minute after the last target was written.
	for _, r := range all {
		NewWithT(t).Eventually(phaseOf(t, r.key)).WithTimeout(90*time.Second).WithPolling(time.Second).Should(Equal(secretsv1beta1.RotationCompleted), "%s: not completed after its grace", r.key.Name)
		rot := rotationOf(t, r.key)
		NewWithT(t).Expect(rot.CompletedTime.Sub(rot.DistributedTime.Time)).To(BeNumerically(">=", time.Minute), "%s: the previous secret was invalidated before the grace passed", r.key.Name)
		op.WaitEvent(t, ns, r.key.Name, secretsv1beta1.ReasonPreviousSecretInvalidated)
		if _, err := gocloak.NewClient(kc.URL).LoginClient(ctx, r.clientID, r.before, graceRealm); err == nil {
			t.Fatalf("%s: the previous secret still logs in after the grace", r.key.Name)
		}
		NewWithT(t).Eventually(func() map[string][]byte { return secretOf(t, ns, r.key.Name+"-creds").Data }).
			WithTimeout(10*time.Second).ShouldNot(HaveKey("previous"), "%s: the invalidated secret stays in the Secret", r.key.Name)
	}
	for _, r := range all {
		r.c.Stop()
		// A login every 200 ms over more than a minute; a busy machine's
		// Keycloak answers slower, so the floor says only that it ran.
		if r.c.Failures.Load() != 0 || !r.c.UsedNew.Load() || r.c.Logins.Load() < 30 {
			t.Fatalf("%s: %d failed logins of %d (used the new secret: %v); want none, and the new secret used", r.key.Name, r.c.Failures.Load(), r.c.Logins.Load(), r.c.UsedNew.Load())
		}
		t.Logf("%s: %d logins through the rotation, none failed", r.key.Name, r.c.Logins.Load())
	}
}

// TestRotationWithoutGrace: in a realm that keeps no previous secret, a
// rotation is refused (RotationReady GraceUnavailable, nothing regenerated)
// until the spec accepts downtime; then the same consumer fails to log in
// until it sees the new secret — the control that shows the consumer
// counts what it should.
func TestRotationWithoutGrace(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	k := credential(ns, "no-grace", server, clientID)
	k.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	k.Spec.Rotation = &secretsv1beta1.RotationSpec{}
	if err := op.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(k)
	waitCredential(t, key, secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	before, _ := clientSecretOf(ctx, kc, realm, clientID)
	var after atomic.Value
	c := consume(t, ns, "no-grace-creds", realm, &after)
	defer c.Stop()

	changeCredential(t, key, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "no-grace-1"}
	})
	got := waitCredential(t, key, secretsv1beta1.TypeRotationReady, metav1.ConditionFalse, secretsv1beta1.ReasonGraceUnavailable, 20*time.Second)
	NewWithT(t).Expect(got.Status.LastRotationRequest).To(Equal("no-grace-1"), "the refused request is handled")
	op.WaitEvent(t, ns, "no-grace", secretsv1beta1.ReasonGraceUnavailable)
	if now, _ := clientSecretOf(ctx, kc, realm, clientID); now != before {
		t.Fatal("a rotation without grace was made although the spec does not accept downtime")
	}

	changeCredential(t, key, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.Rotation.AcceptDowntime = true
		k.Annotations[secretsv1beta1.RotationRequestAnnotation] = "no-grace-2"
	})
	NewWithT(t).Eventually(phaseOf(t, key)).WithTimeout(20 * time.Second).Should(Equal(secretsv1beta1.RotationCompleted))
	op.WaitEvent(t, ns, "no-grace", secretsv1beta1.ReasonRotatedWithoutGrace)
	now, _ := clientSecretOf(ctx, kc, realm, clientID)
	after.Store(now)
	NewWithT(t).Eventually(c.UsedNew.Load).WithTimeout(podDelay + 10*time.Second).Should(BeTrue())
	c.Stop()
	if c.Failures.Load() == 0 {
		t.Fatalf("no failed login of %d through a rotation without grace: the consumer does not see what it should", c.Logins.Load())
	}
	t.Logf("without grace: %d of %d logins failed (the first: %v)", c.Failures.Load(), c.Logins.Load(), c.FirstFailure.Load())
}
