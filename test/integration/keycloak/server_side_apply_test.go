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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
)

// TestAnEarlierReleasesSecretIsWrittenOnlyWhenItMust: a Secret whose
// fields an earlier release owns (an Update entry of "manager", the name
// the API server gave the image's binary) is not rewritten for the
// upgrade. A key the spec drops goes; a label only that release wrote
// stays (any kubebuilder-built tool writes as "manager" too, so that entry
// may hold a tool's fields); a key a tool added stays; a label the
// operator applied and the spec drops goes; an edit is still repaired.
func TestAnEarlierReleasesSecretIsWrittenOnlyWhenItMust(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	clientID := newClientID(t, "")
	kcc := credential(ns, "legacy", server, clientID)
	kcc.Spec.Target.Labels = map[string]string{"team": "payments"}
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)

	// As 0.x left it: the operator's fields in an Update entry of "manager",
	// and a key a tool added.
	s := secretOf(t, ns, "legacy-creds")
	for i, e := range s.ManagedFields {
		if e.Manager == secrets.FieldManager {
			s.ManagedFields[i].Manager, s.ManagedFields[i].Operation = "manager", metav1.ManagedFieldsOperationUpdate
		}
	}
	s.Data["ca.crt"] = []byte("a tool's")
	if err := op.Client.Update(ctx, s, client.FieldOwner("tool")); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(managersOf(secretOf(t, ns, "legacy-creds"))).To(ConsistOf("manager/Update", "tool/Update"))

	// A pass that finds it in step writes nothing.
	before := secretOf(t, ns, "legacy-creds").ResourceVersion
	updateCredential(t, kcc, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.RefreshInterval = &metav1.Duration{Duration: 31 * time.Second}
	})
	NewWithT(t).Expect(secretOf(t, ns, "legacy-creds").ResourceVersion).To(Equal(before), "rewritten for the upgrade alone")

	// The spec drops its clientId key and its label.
	updateCredential(t, kcc, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.Target.Keys.ClientID = ""
		k.Spec.Target.Labels = map[string]string{"tier": "gold"}
	})
	NewWithT(t).Eventually(func() map[string][]byte { return secretOf(t, ns, "legacy-creds").Data }).
		WithTimeout(repairedWithin).Should(Not(HaveKey("key")))
	after := secretOf(t, ns, "legacy-creds")
	NewWithT(t).Expect(after.Data).To(HaveKeyWithValue("ca.crt", []byte("a tool's")))
	NewWithT(t).Expect(after.Data).To(HaveKey("secret"))
	NewWithT(t).Expect(after.Labels).To(HaveKeyWithValue("team", "payments"), "a label only the earlier release's entry holds is left")
	NewWithT(t).Expect(after.Labels).To(HaveKeyWithValue("tier", "gold"))
	NewWithT(t).Expect(managersOf(after)).To(ContainElements(secrets.FieldManager+"/Apply", "tool/Update"))

	// A label the operator applied goes when the spec drops it.
	updateCredential(t, kcc, func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.Labels = nil })
	NewWithT(t).Eventually(func() map[string]string { return secretOf(t, ns, "legacy-creds").Labels }).
		WithTimeout(repairedWithin).Should(Not(HaveKey("tier")))

	// Edited by hand, the key is still the operator's: repaired.
	edited := secretOf(t, ns, "legacy-creds")
	edited.Data["secret"] = []byte("tampered")
	if err := op.Client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string { return string(secretOf(t, ns, "legacy-creds").Data["secret"]) }).
		WithTimeout(repairedWithin).ShouldNot(Equal("tampered"))
	NewWithT(t).Expect(secretOf(t, ns, "legacy-creds").Data).To(HaveKeyWithValue("ca.crt", []byte("a tool's")))
}

// TestALabelAnotherTeamSetIsNotTaken: a spec label that the target
// namespace already set on the Secret to another value is refused, not
// forced (a later spec could then remove it).
func TestALabelAnotherTeamSetIsNotTaken(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	kcc := credential(ns, "labels", server, newClientID(t, ""))
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	s := secretOf(t, ns, "labels-creds")
	s.Labels["cost-center"] = "theirs"
	if err := op.Client.Update(ctx, s, client.FieldOwner("team-b")); err != nil {
		t.Fatal(err)
	}
	updateCredential(t, kcc, func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.Target.Labels = map[string]string{"cost-center": "mine"}
	})
	got := waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeSecretsSynced, metav1.ConditionFalse, secretsv1beta1.ReasonSecretNotOwned, readyWithin)
	NewWithT(t).Expect(got.Status.Targets[0].Message).To(ContainSubstring("label cost-center"))
	NewWithT(t).Expect(secretOf(t, ns, "labels-creds").Labels).To(HaveKeyWithValue("cost-center", "theirs"))
}

// managersOf lists a Secret's managedFields entries as manager/operation.
func managersOf(s *corev1.Secret) []string {
	var out []string
	for _, e := range s.ManagedFields {
		out = append(out, e.Manager+"/"+string(e.Operation))
	}
	return out
}

// updateCredential changes kcc's spec and waits until its status describes
// the new generation.
func updateCredential(t *testing.T, kcc *secretsv1beta1.KeycloakClientCredential, change func(*secretsv1beta1.KeycloakClientCredential)) {
	t.Helper()
	ctx := context.Background()
	var generation int64
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var k secretsv1beta1.KeycloakClientCredential
		if err := op.Client.Get(ctx, client.ObjectKeyFromObject(kcc), &k); err != nil {
			return err
		}
		change(&k)
		err := op.Client.Update(ctx, &k)
		generation = k.Generation
		return err
	}); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() int64 {
		var k secretsv1beta1.KeycloakClientCredential
		_ = op.Client.Get(ctx, client.ObjectKeyFromObject(kcc), &k)
		return k.Status.ObservedGeneration
	}).WithTimeout(readyWithin).Should(BeNumerically(">=", generation))
}
