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
	"strings"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	readyWithin = 30 * time.Second
	// repairedWithin is far below the hour-long refresh of the repair test.
	repairedWithin = 20 * time.Second
)

func TestSecretWrittenInTwoNamespacesWithKeyMapping(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	other := op.NewNamespace(t, consenting(ns))
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	kcc := credential(ns, "gitea", server, clientID, ns, other)
	kcc.Spec.Target.Keys.IssuerURL = "issuer"
	kcc.Spec.Target.Keys.TokenURL = "token_url"
	kcc.Spec.Target.Labels = map[string]string{"reloader.stakater.com/match": "true"}
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeSourceAvailable, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, time.Second)
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeSecretsSynced, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, time.Second)

	want, err := clientSecretOf(ctx, kc, realm, clientID)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{ns, other} {
		s := secretOf(t, target, "gitea-creds")
		NewWithT(t).Expect(s.Data).To(Equal(map[string][]byte{
			"key":       []byte(clientID),
			"secret":    []byte(want),
			"issuer":    []byte(kc.URL + "/realms/" + realm),
			"token_url": []byte(kc.URL + "/realms/" + realm + "/protocol/openid-connect/token"),
		}), "Secret in %s", target)
		NewWithT(t).Expect(s.Type).To(Equal(corev1.SecretTypeOpaque))
		NewWithT(t).Expect(s.Labels).To(HaveKeyWithValue("reloader.stakater.com/match", "true"))
	}
	NewWithT(t).Expect(got.Status.Targets).To(ConsistOf(
		secretsv1beta1.TargetStatus{Namespace: ns, Synced: true, Reason: secretsv1beta1.ReasonSynced},
		secretsv1beta1.TargetStatus{Namespace: other, Synced: true, Reason: secretsv1beta1.ReasonSynced},
	))
	op.WaitEvent(t, ns, "gitea", secretsv1beta1.ReasonCreated)

	// Read as v1alpha1: the shape of the seeds.
	var alpha secretsv1alpha1.KeycloakClientCredential
	if err := op.Client.Get(ctx, client.ObjectKeyFromObject(kcc), &alpha); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(alpha.Spec.Source).To(Equal(secretsv1alpha1.Source{KeycloakServer: server, Realm: realm, ClientID: clientID}))
	NewWithT(t).Expect(alpha.Spec.Target.Namespace).To(Equal([]string{ns, other}))
	NewWithT(t).Expect(alpha.Spec.Target.Fields).To(Equal(secretsv1alpha1.Fields{ClientID: "key", ClientSecret: "secret"}))
	NewWithT(t).Expect(alpha.Spec.Target.RefreshPeriod.Duration).To(Equal(30 * time.Second))
}

func TestV1alpha1CredentialReadsBackAsV1beta1(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	alpha := &secretsv1alpha1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns},
		Spec: secretsv1alpha1.KeycloakClientCredentialSpec{
			Source: secretsv1alpha1.Source{KeycloakServer: server, Realm: realm, ClientID: clientID},
			Target: secretsv1alpha1.Target{
				SecretName: "legacy-creds", Namespace: []string{ns}, RefreshPeriod: &metav1.Duration{Duration: 10 * time.Minute},
				Fields: secretsv1alpha1.Fields{ClientID: "key", ClientSecret: "secret"},
			},
		},
	}
	if err := op.Client.Create(ctx, alpha); err != nil {
		t.Fatal(err)
	}
	beta := waitCredential(t, client.ObjectKeyFromObject(alpha), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	NewWithT(t).Expect(beta.Spec.Source.ServerRef.Name).To(Equal(server))
	NewWithT(t).Expect(beta.Spec.Target.Keys).To(Equal(secretsv1beta1.SecretKeys{ClientID: "key", ClientSecret: "secret"}))
	NewWithT(t).Expect(beta.Spec.DeletionPolicy).To(Equal(secretsv1beta1.DeletionPolicyDelete), "defaulted")
	want, _ := clientSecretOf(ctx, kc, realm, clientID)
	NewWithT(t).Expect(string(secretOf(t, ns, "legacy-creds").Data["secret"])).To(Equal(want))

	var back secretsv1alpha1.KeycloakClientCredential
	if err := op.Client.Get(ctx, client.ObjectKeyFromObject(alpha), &back); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(back.Spec).To(Equal(alpha.Spec))
}

// TestSecretWorksAndARegeneratedSecretPropagates uses the Secret as its
// workload would: a client-credentials token request to Keycloak.
func TestSecretWorksAndARegeneratedSecretPropagates(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	kcc := credential(ns, "app", server, clientID)
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	old := secretOf(t, ns, "app-creds")
	tokenRequest := func(s *corev1.Secret) error {
		_, err := gocloak.NewClient(kc.URL).LoginClient(ctx, string(s.Data["key"]), string(s.Data["secret"]), realm)
		return err
	}
	if err := tokenRequest(old); err != nil {
		t.Fatalf("a token request with the Secret's values failed: %v", err)
	}

	if err := regenerate(ctx, kc, realm, clientID); err != nil {
		t.Fatal(err)
	}
	var updated *corev1.Secret
	NewWithT(t).Eventually(func() string {
		updated = secretOf(t, ns, "app-creds")
		return string(updated.Data["secret"])
	}).WithTimeout(100*time.Second).WithPolling(time.Second).ShouldNot(Equal(string(old.Data["secret"])), "new secret propagated by the first refresh (the first is spread over up to 2 refreshIntervals)")
	NewWithT(t).Expect(updated.UID).To(Equal(old.UID), "updated in place, not re-created")
	if err := tokenRequest(old); err == nil {
		t.Fatal("the old secret still works after regeneration")
	}
	if err := tokenRequest(updated); err != nil {
		t.Fatalf("the propagated secret does not work: %v", err)
	}
	op.WaitEvent(t, ns, "app", secretsv1beta1.ReasonUpdated)
}

func TestRotationRegeneratesTheSecretWhenDue(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	kcc := credential(ns, "rotated", server, clientID)
	// The suite's realm keeps no previous secret (TestRotationWithGrace
	// has one that does).
	kcc.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}, AcceptDowntime: true}
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	before := string(secretOf(t, ns, "rotated-creds").Data["secret"])
	NewWithT(t).Expect(got.Status.LastRotationTime).To(BeNil(), "not due within the first hour")

	// The last rotation was two hours ago: one is due now.
	changeStatus(t, client.ObjectKeyFromObject(kcc), func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Status.LastRotationTime = &metav1.Time{Time: time.Now().Add(-2 * time.Hour)}
	})
	// A status write does not bring the resource back (the operator's own
	// would loop), and the refresh that would find the rotation due is up to
	// half a minute away: a spec change brings it now.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := op.Client.Get(ctx, client.ObjectKeyFromObject(kcc), got); err != nil {
			return err
		}
		got.Spec.RefreshInterval = &metav1.Duration{Duration: 31 * time.Second}
		return op.Client.Update(ctx, got)
	}); err != nil {
		t.Fatal(err)
	}
	op.WaitEvent(t, ns, "rotated", secretsv1beta1.ReasonRotated)
	NewWithT(t).Eventually(func() string { return string(secretOf(t, ns, "rotated-creds").Data["secret"]) }).
		WithTimeout(10 * time.Second).ShouldNot(Equal(before))
	now, _ := clientSecretOf(ctx, kc, realm, clientID)
	NewWithT(t).Expect(string(secretOf(t, ns, "rotated-creds").Data["secret"])).To(Equal(now))
}

// TestOnDemandRefreshAndRotation: requests by annotation, each honoured
// once, long before the hour-long refresh would have come.
func TestOnDemandRefreshAndRotation(t *testing.T) {
	ctx := context.Background()
	ns, otherNS := op.NewNamespace(t, nil), op.NewNamespace(t, nil)
	server := newServer(t, kc, ns, otherNS)
	clientID := newClientID(t, "")
	kcc := credential(ns, "asked", server, clientID)
	kcc.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	kcc.Spec.Rotation = &secretsv1beta1.RotationSpec{AcceptDowntime: true} // rotations on request only, in a realm without grace
	// Another team reads the same client, and follows its rotations.
	follower := credential(otherNS, "follower", server, clientID)
	follower.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	for _, k := range []*secretsv1beta1.KeycloakClientCredential{kcc, follower} {
		if err := op.Client.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	}
	key := client.ObjectKeyFromObject(kcc)
	ask := func(annotation, id string) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var k secretsv1beta1.KeycloakClientCredential
			if err := op.Client.Get(ctx, key, &k); err != nil {
				return err
			}
			if k.Annotations == nil {
				k.Annotations = map[string]string{}
			}
			k.Annotations[annotation] = id
			return op.Client.Update(ctx, &k)
		}); err != nil {
			t.Fatal(err)
		}
	}
	status := func() secretsv1beta1.KeycloakClientCredentialStatus {
		var k secretsv1beta1.KeycloakClientCredential
		if err := op.Client.Get(ctx, key, &k); err != nil {
			t.Fatal(err)
		}
		return k.Status
	}

	// Regenerated in Keycloak by hand: the next refresh is an hour away,
	// a refresh request brings the new secret now.
	if err := regenerate(ctx, kc, realm, clientID); err != nil {
		t.Fatal(err)
	}
	regenerated, _ := clientSecretOf(ctx, kc, realm, clientID)
	ask(secretsv1beta1.RefreshRequestAnnotation, "ticket-1")
	NewWithT(t).Eventually(func() string { return string(secretOf(t, ns, "asked-creds").Data["secret"]) }).
		WithTimeout(10*time.Second).Should(Equal(regenerated), "the refresh request did not bring Keycloak's secret")
	NewWithT(t).Eventually(func() string { return status().LastRefreshRequest }).WithTimeout(10 * time.Second).Should(Equal("ticket-1"))
	op.WaitEvent(t, ns, "asked", secretsv1beta1.ReasonRefreshed)

	// A rotation request right after the regeneration waits: Keycloak
	// issued the client's secret just now, and the status says from when.
	ask(secretsv1beta1.RotationRequestAnnotation, "2026-12-02T12-00")
	NewWithT(t).Eventually(func() string {
		if c := meta.FindStatusCondition(status().Conditions, secretsv1beta1.TypeRotationReady); c != nil && c.Reason == secretsv1beta1.ReasonRotationWaiting {
			return c.Message
		}
		return ""
	}).WithTimeout(10*time.Second).Should(ContainSubstring("may be rotated again from"), "a rotation right after a regeneration did not wait")
	if now, _ := clientSecretOf(ctx, kc, realm, clientID); now != regenerated {
		t.Fatal("rotated within minutes of the secret's issue")
	}
	// Once the secret is older than the gap (its record aged by the admin,
	// as the clock would), the request regenerates once, and the Secret
	// follows.
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.AgeSecret(ctx, realm, clientID, time.Hour); err != nil {
		t.Fatal(err)
	}
	ask(secretsv1beta1.RefreshRequestAnnotation, "ticket-2")
	op.WaitEvent(t, ns, "asked", secretsv1beta1.ReasonRotated)
	NewWithT(t).Eventually(func() string { return status().LastRotationRequest }).WithTimeout(10 * time.Second).Should(Equal("2026-12-02T12-00"))
	rotated, _ := clientSecretOf(ctx, kc, realm, clientID)
	NewWithT(t).Expect(rotated).NotTo(Equal(regenerated), "Keycloak's secret did not change")
	NewWithT(t).Eventually(func() string { return string(secretOf(t, ns, "asked-creds").Data["secret"]) }).
		WithTimeout(10 * time.Second).Should(Equal(rotated))
	if _, err := gocloak.NewClient(kc.URL).LoginClient(ctx, clientID, rotated, realm); err != nil {
		t.Fatalf("a token request with the rotated secret failed: %v", err)
	}
	NewWithT(t).Eventually(func() string { return string(secretOf(t, otherNS, "follower-creds").Data["secret"]) }).
		WithTimeout(10*time.Second).Should(Equal(rotated), "the other reader of the client did not follow the rotation (its refresh is an hour away)")
	// Handled once: the pass a spec change brings does not rotate again.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var k secretsv1beta1.KeycloakClientCredential
		if err := op.Client.Get(ctx, key, &k); err != nil {
			return err
		}
		k.Spec.RefreshInterval = &metav1.Duration{Duration: 59 * time.Minute}
		return op.Client.Update(ctx, &k)
	}); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() int64 { return status().ObservedGeneration }).WithTimeout(10*time.Second).Should(BeNumerically(">=", 2), "the spec change was not reconciled")
	NewWithT(t).Consistently(func() string { s, _ := clientSecretOf(ctx, kc, realm, clientID); return s }).
		WithTimeout(3*time.Second).WithPolling(500*time.Millisecond).Should(Equal(rotated), "the same request rotated twice")
}

// TestDeletedOrEditedSecretIsRepairedAtOnce: repaired long before the
// hour-long refresh, so by the watch on owned Secrets. How quickly (the
// target is a second) is BenchmarkTargetSecretRepair's to check (make
// bench); the bound here only leaves no doubt about the cause.
func TestDeletedOrEditedSecretIsRepairedAtOnce(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	kcc := credential(ns, "app", server, clientID)
	kcc.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour} // repairs must not wait for the refresh
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	good := secretOf(t, ns, "app-creds").Data

	edited := secretOf(t, ns, "app-creds")
	edited.Data["secret"] = []byte("tampered")
	if err := op.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() map[string][]byte { return secretOf(t, ns, "app-creds").Data }).
		WithTimeout(repairedWithin).WithPolling(50 * time.Millisecond).Should(Equal(good))
	op.WaitEvent(t, ns, "app", secretsv1beta1.ReasonDriftRepaired)

	if err := op.Client.Delete(ctx, secretOf(t, ns, "app-creds")); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() error {
		return op.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-creds"}, &corev1.Secret{})
	}).WithTimeout(repairedWithin).WithPolling(50 * time.Millisecond).Should(Succeed())
	NewWithT(t).Expect(secretOf(t, ns, "app-creds").Data).To(Equal(good))
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)

	t.Run("target namespace without consent", func(t *testing.T) {
		refusing := op.NewNamespace(t, nil)
		kcc := credential(ns, "partial", server, newClientID(t, ""), ns, refusing)
		if err := op.Client.Create(ctx, kcc); err != nil {
			t.Fatal(err)
		}
		got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonPartiallySynced, readyWithin)
		NewWithT(t).Expect(got.Status.Targets).To(ContainElement(secretsv1beta1.TargetStatus{
			Namespace: refusing, Synced: false, Reason: secretsv1beta1.ReasonTargetNotAllowed,
			Message: "namespace " + refusing + " does not consent: its secrets.carbogame.com/allowed-source-namespaces annotation does not list \"" + ns + "\"",
		}))
		secretOf(t, ns, "partial-creds") // the consenting target proceeds
		err := op.Client.Get(ctx, client.ObjectKey{Namespace: refusing, Name: "partial-creds"}, &corev1.Secret{})
		NewWithT(t).Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no Secret in the refusing namespace")
		op.WaitEvent(t, ns, "partial", secretsv1beta1.ReasonTargetNotAllowed)
	})

	t.Run("foreign Secret of the same name", func(t *testing.T) {
		foreign := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "taken-creds", Namespace: ns},
			StringData: map[string]string{"secret": "someone else's"},
		}
		if err := op.Client.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		kcc := credential(ns, "taken", server, newClientID(t, ""))
		if err := op.Client.Create(ctx, kcc); err != nil {
			t.Fatal(err)
		}
		waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonSecretNotOwned, readyWithin)
		var s corev1.Secret
		if err := op.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &s); err != nil {
			t.Fatal(err)
		}
		NewWithT(t).Expect(s.Data).To(Equal(map[string][]byte{"secret": []byte("someone else's")}), "foreign Secret untouched")
		op.WaitEvent(t, ns, "taken", secretsv1beta1.ReasonSecretNotOwned)
	})

	t.Run("masked secret", func(t *testing.T) {
		kcc := credential(ns, "masked", server, newClientID(t, "**********"))
		if err := op.Client.Create(ctx, kcc); err != nil {
			t.Fatal(err)
		}
		got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeSourceAvailable, metav1.ConditionFalse, secretsv1beta1.ReasonNoUsableSecret, readyWithin)
		NewWithT(t).Expect(got.Status.Conditions).To(ContainElement(HaveField("Message", ContainSubstring("Keycloak returned a masked secret"))))
		err := op.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "masked-creds"}, &corev1.Secret{})
		NewWithT(t).Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing written")
	})

	// A server that grants the namespace nothing answers as one that does
	// not exist: admitted with the same warning, the same reason and the
	// same message, the name aside. A tenant learns of no server she may
	// not use.
	t.Run("server that grants the namespace nothing", func(t *testing.T) {
		other := newServer(t, kc, "someone-else")
		answers := map[string]string{}
		for name, server := range map[string]string{"barred": other, "missing": "no-such-server-" + ns} {
			kcc := credential(ns, name, server, newClientID(t, ""))
			warned := &harness.Warnings{}
			cfg := rest.CopyConfig(op.Config)
			cfg.WarningHandler = warned
			c, err := client.New(cfg, client.Options{Scheme: op.Client.Scheme()})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Create(ctx, kcc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonServerNotFound, readyWithin)
			ready := meta.FindStatusCondition(got.Status.Conditions, secretsv1beta1.TypeReady)
			answers[name] = strings.ReplaceAll(strings.Join(warned.All(), "; ")+" | "+ready.Message, server, "SERVER")
		}
		if answers["barred"] != answers["missing"] || !strings.Contains(answers["barred"], "does not exist or grants namespace") {
			t.Fatalf("a server that grants nothing answers\n%s\nand a missing one\n%s", answers["barred"], answers["missing"])
		}
	})
}

func TestDeletionRemovesOrRetainsSecrets(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []secretsv1beta1.DeletionPolicy{secretsv1beta1.DeletionPolicyDelete, secretsv1beta1.DeletionPolicyRetain} {
		t.Run(string(policy), func(t *testing.T) {
			ns := op.NewNamespace(t, nil)
			kcc := credential(ns, "app", newServer(t, kc, ns), newClientID(t, ""))
			kcc.Spec.DeletionPolicy = policy
			if err := op.Client.Create(ctx, kcc); err != nil {
				t.Fatal(err)
			}
			waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
			if err := op.Client.Delete(ctx, kcc); err != nil {
				t.Fatal(err)
			}
			waitGone(t, kcc)
			err := op.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-creds"}, &corev1.Secret{})
			if policy == secretsv1beta1.DeletionPolicyDelete {
				NewWithT(t).Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Secret removed")
			} else {
				NewWithT(t).Expect(err).NotTo(HaveOccurred(), "Secret retained")
			}
		})
	}

	// A resource whose source never worked is still deleted.
	t.Run("never synced", func(t *testing.T) {
		ns := op.NewNamespace(t, nil)
		kcc := credential(ns, "orphan", "no-such-server", "none")
		if err := op.Client.Create(ctx, kcc); err != nil {
			t.Fatal(err)
		}
		waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonServerNotFound, readyWithin)
		if err := op.Client.Delete(ctx, kcc); err != nil {
			t.Fatal(err)
		}
		waitGone(t, kcc)
	})
}

func waitGone(t *testing.T, kcc *secretsv1beta1.KeycloakClientCredential) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		err := op.Client.Get(context.Background(), client.ObjectKeyFromObject(kcc), &secretsv1beta1.KeycloakClientCredential{})
		return apierrors.IsNotFound(err)
	}).WithTimeout(20*time.Second).Should(BeTrue(), "%s still there", kcc.Name)
}

func contains(haystack string, needles ...string) bool {
	for _, n := range needles {
		if n != "" && strings.Contains(haystack, n) {
			return true
		}
	}
	return false
}
