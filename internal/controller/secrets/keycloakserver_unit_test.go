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

package secrets

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak/keycloakfake"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

func TestLegacyGrantsAreAConditionWhileInEffect(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = secretsv1beta1.AddToScheme(scheme)
	server := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "old", Annotations: map[string]string{tenancy.LegacyNamespaceGrantsAnnotation: "true"}},
		Spec:       secretsv1beta1.KeycloakServerSpec{URL: "https://sso.test", AllowedNamespaces: []string{"team-a"}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(server).WithStatusSubresource(server).Build()
	recorder := events.NewFakeRecorder(10)
	r := &KeycloakServerReconciler{Client: c, Clients: &fakeClients{kc: &keycloakfake.Server{}}, Recorder: recorder}
	reconcile := func() *metav1.Condition {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "old"}}); err != nil {
			t.Fatal(err)
		}
		var s secretsv1beta1.KeycloakServer
		_ = c.Get(context.Background(), client.ObjectKey{Name: "old"}, &s)
		return meta.FindStatusCondition(s.Status.Conditions, secretsv1beta1.TypeLegacyGrants)
	}
	if cond := reconcile(); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "lets team-a read any client") {
		t.Fatalf("LegacyGrants = %+v", cond)
	}
	reconcile() // no second Event for the same state
	warnings := 0
	for len(recorder.Events) > 0 {
		if e := <-recorder.Events; strings.HasPrefix(e, "Warning LegacyGrants") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Fatalf("%d LegacyGrants Events, want 1", warnings)
	}

	var s secretsv1beta1.KeycloakServer
	_ = c.Get(context.Background(), client.ObjectKey{Name: "old"}, &s)
	s.Annotations = nil
	if err := c.Update(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	if cond := reconcile(); cond != nil {
		t.Fatalf("LegacyGrants still set after the opt-in was removed: %+v", cond)
	}
}
