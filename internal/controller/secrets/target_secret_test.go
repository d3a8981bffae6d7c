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
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func gitea() *secretsv1beta1.KeycloakClientCredential {
	return &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "gitea", Namespace: "platform"},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Target: secretsv1beta1.TargetSpec{SecretName: "gitea-creds", Namespaces: []string{"gitea"},
				Keys: secretsv1beta1.SecretKeys{ClientID: "id", ClientSecret: "secret"}},
		},
	}
}

func TestOnlyTheKeysTheOperatorWroteAreItsOwn(t *testing.T) {
	kcc := gitea()
	s := newTargetSecret(kcc, "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")})
	if edited(s) {
		t.Fatal("a fresh Secret reads as edited")
	}

	// Someone adds a key of their own: not drift, and kept.
	s.Data["ca.crt"] = []byte("pem")
	if edited(s) {
		t.Fatal("a key the operator did not write counts as drift")
	}
	if applyDesired(s, kcc, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}) {
		t.Fatal("an unchanged value was rewritten because of a foreign key")
	}
	// A new secret from Keycloak, and the spec drops the clientId key.
	kcc.Spec.Target.Keys.ClientID = ""
	if !applyDesired(s, kcc, map[string][]byte{"secret": []byte("s2")}) {
		t.Fatal("no change reported")
	}
	if got := slices.Sorted(maps.Keys(s.Data)); !slices.Equal(got, []string{"ca.crt", "secret"}) {
		t.Fatalf("keys = %v: want the foreign key kept, the dropped key removed", got)
	}
	// Someone edits a key the operator wrote: drift.
	s.Data["secret"] = []byte("hand-edited")
	if !edited(s) {
		t.Fatal("an edit of the operator's key is not drift")
	}
}

func TestSecretsWrittenBeforeManagedKeysAreWhollyTheOperators(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}}
	s.Annotations = map[string]string{DataHashAnnotation: dataHash(s.Data)}
	if edited(s) {
		t.Fatal("an old Secret reads as edited")
	}
	if got := managedKeys(s); !slices.Equal(got, []string{"id", "secret"}) {
		t.Fatalf("managedKeys = %v", got)
	}
}

func TestForgedOwnerLabelsQueueNothing(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = secretsv1beta1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	r := &KeycloakClientCredentialReconciler{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(gitea()).Build()}
	secret := func(ns, name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			ManagedByLabel: ManagedByValue, OwnerNamespaceLabel: "platform", OwnerNameLabel: "gitea"}}}
	}
	tests := []struct {
		name   string
		secret *corev1.Secret
		want   []reconcile.Request
	}{
		{"the owner's real target", secret("gitea", "gitea-creds"), []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "gitea"}}}},
		{"a namespace the owner does not target", secret("tenant-x", "gitea-creds"), nil},
		{"another name in a targeted namespace", secret("gitea", "other"), nil},
		{"an owner that does not exist", func() *corev1.Secret {
			s := secret("gitea", "gitea-creds")
			s.Labels[OwnerNameLabel] = "nobody"
			return s
		}(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.ownerOfSecret(context.Background(), tt.secret); !slices.Equal(got, tt.want) {
				t.Fatalf("queued %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAKeyOthersWroteIsNotTakenOver(t *testing.T) {
	kcc := gitea()
	s := newTargetSecret(kcc, "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")})
	s.Data["password"] = []byte("a tool's")
	if got := foreignKeys(s, map[string][]byte{"password": []byte("s1")}); !slices.Equal(got, []string{"password"}) {
		t.Fatalf("foreignKeys = %v", got)
	}
	if got := foreignKeys(s, map[string][]byte{"secret": []byte("s2")}); len(got) > 0 {
		t.Fatalf("the operator's own key counted as foreign: %v", got)
	}
}

func TestOwnershipNeedsTheUIDWhenRecorded(t *testing.T) {
	kcc := gitea()
	kcc.UID = "uid-1"
	s := newTargetSecret(kcc, "gitea", map[string][]byte{"secret": []byte("s1")})
	none := &secretsv1beta1.KeycloakClientCredentialStatus{}
	if !isOwnedBy(s, kcc, none) {
		t.Fatal("its own Secret is not owned")
	}
	later := gitea()
	later.UID = "uid-2" // a later resource of the same name
	if isOwnedBy(s, later, none) {
		t.Fatal("a Secret of an earlier resource of the same name counts as owned")
	}
	delete(s.Annotations, OwnerUIDAnnotation) // written before the UID was recorded
	if isOwnedBy(s, later, none) {
		t.Fatal("a Secret without a recorded UID, in a namespace never written to, counts as owned")
	}
	synced := &secretsv1beta1.KeycloakClientCredentialStatus{Targets: []secretsv1beta1.TargetStatus{{Namespace: "gitea", Synced: true}}}
	if !isOwnedBy(s, later, synced) {
		t.Fatal("a Secret written before UIDs were recorded, in a namespace written to, is not owned")
	}
}

func TestCleanupTouchesOnlySecretsItWrote(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = secretsv1beta1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	kcc := gitea()
	kcc.UID = "uid-1"
	labelled := func(ns, uid string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitea-creds", Labels: map[string]string(ownedBy(kcc))}}
		if uid != "" {
			s.Annotations = map[string]string{OwnerUIDAnnotation: uid}
		}
		return s
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		labelled("written", "uid-1"),   // written by it
		labelled("old-synced", ""),     // written before UIDs, in a namespace it synced
		labelled("never-synced", ""),   // labels copied into a namespace it never wrote to
		labelled("other-uid", "uid-0"), // an earlier resource of the same name
	).Build()
	r := &KeycloakClientCredentialReconciler{Client: c}
	status := &secretsv1beta1.KeycloakClientCredentialStatus{Targets: []secretsv1beta1.TargetStatus{
		{Namespace: "old-synced", Synced: true}, {Namespace: "never-synced", Synced: false}}}
	got, err := r.writtenSecrets(context.Background(), kcc, status)
	if err != nil {
		t.Fatal(err)
	}
	var namespaces []string
	for _, s := range got {
		namespaces = append(namespaces, s.Namespace)
	}
	slices.Sort(namespaces)
	if !slices.Equal(namespaces, []string{"old-synced", "written"}) {
		t.Fatalf("would clean up in %v", namespaces)
	}
}
