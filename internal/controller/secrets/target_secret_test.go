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
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
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

// applied creates s as the operator does, lets someone else edit it (an
// Update), then writes data to it as applyTarget does, through the fake
// client (which keeps managedFields as the API server does), and returns
// the Secret as stored.
func applied(t *testing.T, s *corev1.Secret, edit func(*corev1.Secret), kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) *corev1.Secret {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithReturnManagedFields().Build()
	ctx := context.Background()
	stored := s.DeepCopy()
	stored.ResourceVersion = ""
	if err := c.Create(ctx, stored, client.FieldOwner(FieldManager)); err != nil {
		t.Fatal(err)
	}
	edit(stored)
	if err := c.Update(ctx, stored, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	r := &KeycloakClientCredentialReconciler{Client: c, Reader: c}
	if !needsApply(digested(stored), kcc, data) {
		t.Fatal("no change to apply")
	}
	if err := r.applyTarget(ctx, digested(stored), kcc, data); err != nil {
		t.Fatal(err)
	}
	var current corev1.Secret
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), &current); err != nil {
		t.Fatal(err)
	}
	return &current
}

func digested(s *corev1.Secret) *corev1.Secret {
	d := s.DeepCopy()
	digest(d)
	return d
}

func TestOnlyTheKeysTheOperatorWroteAreItsOwn(t *testing.T) {
	kcc := gitea()
	s := newTargetSecret(kcc, "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")})
	if edited(digested(s)) {
		t.Fatal("a fresh Secret reads as edited")
	}

	// Someone adds a key of their own: not drift, and kept.
	s.Data["ca.crt"] = []byte("pem")
	if edited(digested(s)) {
		t.Fatal("a key the operator did not write counts as drift")
	}
	if needsApply(digested(s), kcc, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}) {
		t.Fatal("an unchanged value is to be rewritten because of a foreign key")
	}
	// A new secret from Keycloak, and the spec drops the clientId key.
	kcc.Spec.Target.Keys.ClientID = ""
	fresh := newTargetSecret(gitea(), "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")})
	s = applied(t, fresh, func(s *corev1.Secret) { s.Data["ca.crt"] = []byte("pem") }, kcc, map[string][]byte{"secret": []byte("s2")})
	if got := stringData(s.Data); !maps.Equal(got, map[string]string{"ca.crt": "pem", "secret": "s2"}) {
		t.Fatalf("data = %v: want the foreign key kept, the dropped key removed, the new value written", got)
	}
	if edited(digested(s)) {
		t.Fatal("the operator's own write reads as edited")
	}
	// Someone edits a key the operator wrote: drift.
	s.Data["secret"] = []byte("hand-edited")
	if !edited(digested(s)) {
		t.Fatal("an edit of the operator's key is not drift")
	}
}

func TestTheCacheHoldsDigestsNeverValues(t *testing.T) {
	kcc := gitea()
	kcc.Spec.Target.Annotations = map[string]string{"long": strings.Repeat("a", 500)}
	s := newTargetSecret(kcc, "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s3cr3t-value")})
	s.Data["big"] = bytes.Repeat([]byte("x"), 1<<20)
	s.Annotations["others"] = strings.Repeat("o", 100<<10)
	out, _ := DigestSecret(s.DeepCopy())
	d := out.(*corev1.Secret)
	for k, v := range d.Data {
		if len(v) != 32 || bytes.Contains(v, []byte("s3cr3t")) {
			t.Errorf("key %s holds %d bytes, not its digest", k, len(v))
		}
	}
	if len(d.Annotations["others"]) > 100 || len(d.Annotations["long"]) > 100 {
		t.Errorf("long annotations kept whole")
	}
	if d.Annotations[ManagedKeysAnnotation] != s.Annotations[ManagedKeysAnnotation] || edited(d) {
		t.Errorf("the operator's marks were digested, or the Secret reads as edited")
	}
	// In step as it is: no write, though the spec's long annotation is a digest.
	if needsApply(d, kcc, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s3cr3t-value")}) {
		t.Error("a Secret in step is to be written")
	}
	// The informer may hand the transform one object twice: the second
	// time changes nothing.
	again, _ := DigestSecret(d)
	if a := again.(*corev1.Secret); !bytes.Equal(a.Data["secret"], valueDigest([]byte("s3cr3t-value"))) || edited(a) {
		t.Error("a digested Secret was digested again")
	}
	// Nothing a Secret carries makes the cache keep its values or trust a
	// hash it brings: a forged observed hash is replaced.
	forged := s.DeepCopy()
	forged.Annotations["secrets.carbogame.com/digested"] = "true"
	forged.Annotations[observedHashAnnotation] = s.Annotations[DataHashAnnotation]
	forged.Data["secret"] = []byte("hand-edited")
	out, _ = DigestSecret(forged)
	if f := out.(*corev1.Secret); len(f.Data["big"]) != 32 || !edited(f) {
		t.Errorf("a Secret with forged marks kept %d bytes of a value, or hid its edit", len(f.Data["big"]))
	}
}

func TestSecretsWrittenBeforeManagedKeysAreWhollyTheOperators(t *testing.T) {
	s := &corev1.Secret{Data: map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}}
	s.Annotations = map[string]string{DataHashAnnotation: dataHash(s.Data)}
	if edited(digested(s)) {
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

func TestOnlyARecordedUIDMakesASecretTheOperators(t *testing.T) {
	kcc := gitea()
	kcc.UID = "kcc-1"
	secret := func(ns, name, uid, ownerUID string) *corev1.Secret {
		s := newTargetSecret(kcc, ns, map[string][]byte{"secret": []byte("s1")})
		s.Name, s.UID = name, types.UID(uid)
		if ownerUID == "" {
			delete(s.Annotations, OwnerUIDAnnotation)
		} else {
			s.Annotations[OwnerUIDAnnotation] = ownerUID
		}
		return s
	}
	recorded := []secretsv1beta1.WrittenSecret{{Namespace: "gitea", Name: "gitea-creds", UID: "s-1"}}
	synced := []secretsv1beta1.TargetStatus{{Namespace: "gitea", Synced: true}, {Namespace: "dropped", Synced: true}}
	for _, tc := range []struct {
		name             string
		secret           *corev1.Secret
		status           secretsv1beta1.KeycloakClientCredentialStatus
		owned, adoptable bool
	}{
		{"the Secret it created", secret("gitea", "gitea-creds", "s-1", "kcc-1"), secretsv1beta1.KeycloakClientCredentialStatus{Secrets: recorded}, true, false},
		{"a copy under another name", secret("gitea", "gitea-creds-copy", "s-2", "kcc-1"), secretsv1beta1.KeycloakClientCredentialStatus{Secrets: recorded, Targets: synced}, false, false},
		{"a copy in a namespace it does not target", secret("elsewhere", "gitea-creds", "s-3", "kcc-1"), secretsv1beta1.KeycloakClientCredentialStatus{Secrets: recorded, Targets: synced}, false, false},
		{"a copy where the recorded Secret was deleted", secret("gitea", "gitea-creds", "s-4", "kcc-1"), secretsv1beta1.KeycloakClientCredentialStatus{Secrets: recorded, Targets: synced}, false, false},
		{"unrecorded at its target with its UID (earlier release, or a lost status write)", secret("gitea", "gitea-creds", "s-5", "kcc-1"), secretsv1beta1.KeycloakClientCredentialStatus{}, false, true},
		{"unrecorded at its target with another resource's UID", secret("gitea", "gitea-creds", "s-6", "kcc-0"), secretsv1beta1.KeycloakClientCredentialStatus{Targets: synced}, false, false},
		{"written by 0.1 (no owner UID) where the status says synced", secret("dropped", "gitea-creds", "s-7", ""), secretsv1beta1.KeycloakClientCredentialStatus{Targets: synced}, false, true},
		{"no owner UID where it never synced", secret("gitea", "gitea-creds", "s-8", ""), secretsv1beta1.KeycloakClientCredentialStatus{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isOwnedBy(tc.secret, &tc.status); got != tc.owned {
				t.Errorf("isOwnedBy = %v, want %v", got, tc.owned)
			}
			if got := isAdoptable(tc.secret, kcc, &tc.status); got != tc.adoptable {
				t.Errorf("isAdoptable = %v, want %v", got, tc.adoptable)
			}
		})
	}
}

func TestReleaseTouchesOnlySecretsItWroteAndKeepsOthersKeys(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = secretsv1beta1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	kcc := gitea()
	kcc.UID = "kcc-1"
	kcc.Spec.Target.Namespaces = []string{"gitea", "shared"}
	written := func(ns, name, uid string) *corev1.Secret {
		s := newTargetSecret(kcc, ns, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")})
		s.Name, s.UID = name, types.UID(uid)
		return s
	}
	shared := written("shared", "gitea-creds", "s-2")
	shared.Data["ca.crt"] = []byte("a tool's") // a key someone added
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		written("gitea", "gitea-creds", "s-1"),
		shared,
		written("gitea", "gitea-creds-copy", "s-3"), // a copy: same labels and annotations
	).Build()
	r := &KeycloakClientCredentialReconciler{Client: c}
	kcc.Status.Secrets = []secretsv1beta1.WrittenSecret{{Namespace: "gitea", Name: "gitea-creds", UID: "s-1"}, {Namespace: "shared", Name: "gitea-creds", UID: "s-2"}}
	// Twice: a finalize whose finalizer removal lost a conflict (the tenant
	// wrote the resource meanwhile) runs again on the same status.
	for range 2 {
		for _, w := range r.writtenSecrets(context.Background(), kcc, &kcc.Status) {
			if _, err := r.release(context.Background(), w); err != nil {
				t.Fatal(err)
			}
		}
	}
	var left corev1.SecretList
	if err := c.List(context.Background(), &left); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range left.Items {
		names = append(names, s.Namespace+"/"+s.Name)
		if s.Namespace == "shared" {
			if !maps.Equal(map[string]string{"ca.crt": "a tool's"}, stringData(s.Data)) || s.Labels[ManagedByLabel] != "" || s.Annotations[OwnerUIDAnnotation] != "" {
				t.Errorf("the shared Secret after release: data %v, labels %v, annotations %v", stringData(s.Data), s.Labels, s.Annotations)
			}
		}
	}
	if !slices.Equal(names, []string{"gitea/gitea-creds-copy", "shared/gitea-creds"}) {
		t.Fatalf("Secrets left: %v, want the copy and the shared Secret", names)
	}
}

func stringData(data map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}

// refusingCreates is the manager's client with the API server refusing
// every Secret created in one namespace (that namespace's quota).
type refusingCreates struct {
	client.Client
	namespace string
}

func (c refusingCreates) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*corev1.Secret); ok && obj.GetNamespace() == c.namespace {
		return apierrors.NewForbidden(corev1.Resource("secrets"), obj.GetName(), errors.New(`exceeded quota: team-b-quota, requested: secrets=1, used: secrets=40, limited: secrets=40`))
	}
	return c.Client.Create(ctx, obj, opts...)
}

// A write another namespace refuses (its quota, its admission policy) is
// told in words to that namespace's team, on the Secret's name there; the
// credential's status says only that it failed there.
func TestAnotherNamespacesRefusalIsToldThere(t *testing.T) {
	kcc := teamA("cross", "team-a-web")
	kcc.Spec.Target.Namespaces = []string{"team-b"}
	consenting := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: "team-a"}}}
	w := newKCCWorld(t, kcc)
	if err := w.client.Update(context.Background(), consenting); err != nil {
		t.Fatal(err)
	}
	w.r.Client = refusingCreates{Client: w.r.Client, namespace: "team-b"}
	w.reconcile("cross")
	var got secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKeyFromObject(kcc), &got); err != nil {
		t.Fatal(err)
	}
	for _, target := range got.Status.Targets {
		if target.Namespace == "team-b" && (target.Reason != secretsv1beta1.ReasonTargetFailed || strings.Contains(target.Message, "quota")) {
			t.Fatalf("team-b's target in the tenant's status: %+v (want TargetFailed, no word of team-b's quota)", target)
		}
	}
	if c := w.ready("cross"); strings.Contains(c.Message, "quota") {
		t.Fatalf("Ready tells the tenant team-b's quota: %q", c.Message)
	}
	var there []string
	for {
		select {
		case e := <-w.events.Events:
			if strings.Contains(e, "quota") {
				there = append(there, e)
			}
			continue
		default:
		}
		break
	}
	if len(there) != 1 || !strings.Contains(there[0], "for KeycloakClientCredential team-a/cross") {
		t.Fatalf("Events with team-b's words: %v, want one, on its Secret", there)
	}
}
