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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const withMarks = `{"f:data":{".":{},"f:secret":{}},"f:metadata":{"f:annotations":{".":{},"f:secrets.carbogame.com/managed-keys":{}},"f:labels":{"f:team":{}}}}`

func TestTheOperatorsEntriesAreItsOwnAndAnEarlierReleasesThatWroteItsMarks(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		name  string
		entry metav1.ManagedFieldsEntry
		want  bool
	}{
		{"its apply entry", entry(FieldManager, apply, `{"f:data":{"f:secret":{}}}`), true},
		{"its creates", entry(FieldManager, update, `{"f:data":{"f:secret":{}}}`), true},
		{"an earlier release (manager) that wrote the marks", entry("manager", update, withMarks), true},
		{"a tool named manager that never wrote the marks", entry("manager", update, `{"f:data":{"f:ca.crt":{}}}`), false},
		{"kubectl edit of the marks", entry("kubectl-edit", update, withMarks), false},
		{"another applier", entry("gitops", apply, withMarks), false},
		{"undecodable fields", entry("manager", update, `not json`), false},
		{"a subresource", func() metav1.ManagedFieldsEntry {
			e := entry(FieldManager, apply, withMarks)
			e.Subresource = "status"
			return e
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isOperatorEntry(&corev1.Secret{}, tc.entry); got != tc.want {
				t.Fatalf("isOperatorEntry = %v, want %v", got, tc.want)
			}
		})
	}
}

// An earlier release wrote as "manager", a name any kubebuilder-built tool
// shares: of its entry, only the data keys managed-keys lists are the
// operator's to remove; a tool's key or label in the same entry is not.
func TestOnlyWhatTheOperatorOwnsAndNoLongerSetsIsDropped(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "a", "env": "prod"},
			Annotations: map[string]string{ManagedKeysAnnotation: "secret", "note": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				entry("manager", metav1.ManagedFieldsOperationUpdate,
					`{"f:data":{".":{},"f:secret":{},"f:ca.crt":{}},"f:metadata":{"f:annotations":{".":{},"f:secrets.carbogame.com/managed-keys":{}},"f:labels":{"f:team":{}}}}`),
				entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:annotations":{"f:note":{}}},"f:data":{"f:gone":{}}}`),
				entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:env":{}}}}`),
			},
		},
		Data: map[string][]byte{"secret": []byte("d"), "ca.crt": []byte("pem")},
	}
	marks := map[string]string{ManagedKeysAnnotation: "secret"}
	got := dropped(s, map[string]string{"team": "a"}, maps.Clone(marks), map[string][]byte{"secret": nil})
	if !slices.Equal(got, []string{"annotations/note"}) {
		t.Fatalf("dropped = %v, want only the annotation the operator applied and no longer sets", got)
	}
	if held := heldByUpdates(s, got); len(held) > 0 {
		t.Fatalf("heldByUpdates = %v: the apply alone removes what only its entry owns", held)
	}
	withNote := maps.Clone(marks)
	withNote["note"] = "x"
	got = dropped(s, nil, withNote, nil)
	if !slices.Equal(got, []string{"data/secret"}) {
		t.Fatalf("dropped = %v, want the earlier release's data key, and neither the tool's key nor the label in its entry", got)
	}
	if held := heldByUpdates(s, got); !slices.Equal(held, []string{"data/secret"}) {
		t.Fatalf("heldByUpdates = %v: an apply would leave the earlier release's key", held)
	}
}

func TestAnEarlierReleasesSecretInStepIsNotWrittenUntilItMustBe(t *testing.T) {
	kcc := gitea()
	kcc.Spec.Target.Labels = map[string]string{"team": "a"}
	data := map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}
	s := newTargetSecret(kcc, "gitea", data)
	s.ManagedFields = []metav1.ManagedFieldsEntry{entry("manager", metav1.ManagedFieldsOperationUpdate,
		`{"f:data":{"f:id":{},"f:secret":{}},"f:metadata":{"f:annotations":{"f:secrets.carbogame.com/managed-keys":{}},"f:labels":{"f:team":{}}}}`)}
	if needsApply(digested(s), kcc, data) {
		t.Fatal("a Secret in step is to be written for the upgrade alone")
	}
	kcc.Spec.Target.Keys.ClientID = ""
	labels, annotations := desiredMeta(kcc, map[string][]byte{"secret": []byte("s1")})
	if got := dropped(digested(s), labels, annotations, map[string][]byte{"secret": []byte("s1")}); !slices.Equal(got, []string{"data/id"}) {
		t.Fatalf("dropped = %v, want the key the spec dropped (and not the label only the earlier release wrote)", got)
	}
	kcc.Spec.Target.Labels = nil
	labels, annotations = desiredMeta(kcc, data)
	if got := dropped(digested(s), labels, annotations, data); len(got) > 0 {
		t.Fatalf("dropped = %v: a label in an entry named manager may be another tool's", got)
	}
}

func TestALabelTheSpecDroppedIsRemovedAndOthersStay(t *testing.T) {
	kcc := gitea()
	kcc.Spec.Target.Labels = map[string]string{"team": "a"}
	data := map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}
	created := newTargetSecret(kcc, "gitea", data)
	kcc.Spec.Target.Labels = nil
	s := applied(t, created, func(s *corev1.Secret) { s.Labels["env"] = "prod" }, kcc, data)
	if _, kept := s.Labels["team"]; kept || s.Labels["env"] != "prod" {
		t.Fatalf("labels = %v: want team removed, env (someone else's) kept", s.Labels)
	}
}

func TestALabelOrAnnotationSomeoneElseSetIsNotTaken(t *testing.T) {
	kcc := gitea()
	kcc.Spec.Target.Labels = map[string]string{"team": "a", "tier": "1"}
	kcc.Spec.Target.Annotations = map[string]string{"owner": "alice"}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Labels:      map[string]string{"team": "b", "tier": "1"},
		Annotations: map[string]string{"owner": "bob"},
	}}
	if got := foreignMeta(s, kcc); !slices.Equal(got, []string{"label team", "annotation owner"}) {
		t.Fatalf("foreignMeta = %v, want the label and annotation others set to another value (the same value is shared)", got)
	}
	s.ManagedFields = []metav1.ManagedFieldsEntry{entry(FieldManager, metav1.ManagedFieldsOperationApply,
		`{"f:metadata":{"f:labels":{"f:team":{}},"f:annotations":{"f:owner":{}}}}`)}
	if got := foreignMeta(s, kcc); len(got) > 0 {
		t.Fatalf("foreignMeta = %v: what the operator applied before is its own to change", got)
	}
}

func TestTheCacheKeepsOnlyTheOperatorsEntriesAndLittleOfThem(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		entry("tool", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:ca.crt":{}}}`),
		entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:data":{"f:secret":{}}}`),
		// Forged, to fill the cache.
		entry(FieldManager, metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:`+strings.Repeat("k", maxEntries)+`":{}}}`),
	}}}
	out, _ := DigestSecret(s)
	got := out.(*corev1.Secret).ManagedFields
	if len(got) != 1 || got[0].Manager != FieldManager || got[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("the cache keeps %d entries", len(got))
	}
}

// fakeWrites is a fake API server holding target Secrets, written through
// applyTarget as the controller writes them.
type fakeWrites struct {
	t *testing.T
	c client.Client
	r *KeycloakClientCredentialReconciler
}

func newFakeWrites(t *testing.T) *fakeWrites {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithReturnManagedFields().Build()
	return &fakeWrites{t: t, c: c, r: &KeycloakClientCredentialReconciler{Client: c, Reader: c}}
}

// write brings the Secret in step with kcc and data, if it needs it.
func (w *fakeWrites) write(kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) *corev1.Secret {
	w.t.Helper()
	s := w.get()
	if d := digested(s); needsApply(d, kcc, data) {
		if err := w.r.applyTarget(context.Background(), d, kcc, data); err != nil {
			w.t.Fatal(err)
		}
	}
	return w.get()
}

func (w *fakeWrites) get() *corev1.Secret {
	w.t.Helper()
	var s corev1.Secret
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "gitea", Name: "gitea-creds"}, &s); err != nil {
		w.t.Fatal(err)
	}
	return &s
}

// A Secret of an earlier release, written once since by an apply that set
// the same label: the label stays in the earlier release's entry, which
// may be another tool's, so dropping it from the spec leaves it.
func TestALabelAnEarlierReleaseWroteStaysAfterAnApply(t *testing.T) {
	w := newFakeWrites(t)
	kcc := gitea()
	kcc.Spec.Target.Labels = map[string]string{"team": "a"}
	if err := w.c.Create(context.Background(), newTargetSecret(kcc, "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}),
		client.FieldOwner("manager")); err != nil {
		t.Fatal(err)
	}
	w.write(kcc, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s2")}) // a rotation
	kcc.Spec.Target.Labels = nil
	s := w.write(kcc, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s2")})
	if s.Labels["team"] != "a" {
		t.Fatalf("labels = %v: the earlier release's label was removed", s.Labels)
	}
}

// A Secret of an earlier release, whose managed-keys mark an apply has
// taken since (the spec added a key): a key the spec then drops is still
// the operator's, and goes.
func TestAKeyAnEarlierReleaseWroteGoesAfterItsMarkMoved(t *testing.T) {
	w := newFakeWrites(t)
	kcc := gitea()
	if err := w.c.Create(context.Background(), newTargetSecret(kcc, "gitea", map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1")}),
		client.FieldOwner("manager")); err != nil {
		t.Fatal(err)
	}
	kcc.Spec.Target.Keys.IssuerURL = "issuer"
	w.write(kcc, map[string][]byte{"id": []byte("gitea"), "secret": []byte("s1"), "issuer": []byte("https://kc")})
	kcc.Spec.Target.Keys.ClientID = ""
	s := w.write(kcc, map[string][]byte{"secret": []byte("s1"), "issuer": []byte("https://kc")})
	if got := stringData(s.Data); !maps.Equal(got, map[string]string{"secret": "s1", "issuer": "https://kc"}) {
		t.Fatalf("data = %v, want the dropped key gone", got)
	}
}
