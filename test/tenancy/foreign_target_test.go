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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// TestAnotherTeamsSecretIsNotDescribedToTheTenant: a namespace consents to
// the tenant's Secrets and already holds one of the name she asks for,
// with keys of its own. The tenant's status says only that a Secret is in
// the way there; which keys it holds is told to that namespace's team, in
// an Event on its Secret.
func TestAnotherTeamsSecretIsNotDescribedToTheTenant(t *testing.T) {
	ctx := context.Background()
	consenting := "team-d-" + appsRealm
	if err := op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consenting,
		Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: own}}}); err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: consenting, Name: "probe-creds"},
		StringData: map[string]string{"secret": "theirs", "payroll-db-password": "theirs"}}
	if err := op.Client.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	k := credential(own, "probe", appsRealm, "team-a-web")
	k.Spec.Target.Namespaces = []string{own, consenting}
	if err := tenant.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	var target secretsv1beta1.TargetStatus
	NewWithT(t).Eventually(func() string {
		var got secretsv1beta1.KeycloakClientCredential
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(k), &got); err != nil {
			t.Fatal(err)
		}
		for _, ts := range got.Status.Targets {
			if ts.Namespace == consenting {
				target = ts
			}
		}
		return target.Reason
	}).WithTimeout(settle).Should(Equal(secretsv1beta1.ReasonSecretNotOwned))
	if strings.Contains(target.Message, "payroll") || strings.Contains(target.Message, "not written for this resource") {
		t.Fatalf("the tenant's status describes the other team's Secret: %q", target.Message)
	}
	var told []string
	NewWithT(t).Eventually(func() string {
		var list eventsv1.EventList
		if err := op.Client.List(ctx, &list, client.InNamespace(consenting)); err != nil {
			t.Fatal(err)
		}
		told = told[:0]
		for _, e := range list.Items {
			if e.Regarding.Kind == "Secret" && e.Regarding.Name == theirs.Name && e.Reason == secretsv1beta1.ReasonSecretNotOwned {
				told = append(told, e.Note)
			}
		}
		return strings.Join(told, "\n")
	}).WithTimeout(settle).Should(And(ContainSubstring("was not written for this resource"), ContainSubstring(own+"/probe")), "the other team is not told why on its Secret")
	t.Logf("the tenant reads %q; the other team, %q", target.Message, told[0])
}
