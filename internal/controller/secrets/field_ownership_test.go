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
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const withMarks = `{"f:data":{".":{},"f:secret":{}},"f:metadata":{"f:annotations":{".":{},"f:secrets.carbogame.com/managed-keys":{}},"f:labels":{"f:team":{}}}}`

func TestTheOperatorsEntriesAreItsApplyAndItsFormerUpdates(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		name  string
		entry metav1.ManagedFieldsEntry
		want  bool
	}{
		{"its apply entry", entry(FieldManager, apply, `{"f:data":{"f:secret":{}}}`), true},
		{"its creates", entry(FieldManager, update, withMarks), true},
		{"an earlier release (manager) that wrote the marks", entry("manager", update, withMarks), true},
		{"a tool named manager that never wrote the marks", entry("manager", update, `{"f:data":{"f:ca.crt":{}}}`), false},
		{"kubectl edit of the marks", entry("kubectl-edit", update, withMarks), false},
		{"another applier", entry("gitops", apply, withMarks), false},
		{"a subresource", func() metav1.ManagedFieldsEntry {
			e := entry(FieldManager, apply, withMarks)
			e.Subresource = "status"
			return e
		}(), false},
		{"undecodable fields", entry(FieldManager, update, `not json`), false},
		{"an entry too large to be the operator's (forged, to fill the cache)", entry(FieldManager, apply, `{"f:data":{"f:`+strings.Repeat("k", maxEntry)+`":{}}}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isOperatorEntry(tc.entry); got != tc.want {
				t.Fatalf("isOperatorEntry = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOnlyWhatTheOperatorOwnsAndNoLongerSetsIsDropped(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "a", "env": "prod"},
			Annotations: map[string]string{ManagedKeysAnnotation: "secret", "note": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				entry("manager", metav1.ManagedFieldsOperationUpdate, withMarks),
				entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:annotations":{"f:note":{}}},"f:data":{"f:gone":{}}}`),
				entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:env":{}}}}`),
			},
		},
		Data: map[string][]byte{"secret": []byte("d")},
	}
	marks := map[string]string{ManagedKeysAnnotation: "secret"}
	data := map[string][]byte{"secret": nil}
	if got := dropped(s, map[string]string{"team": "a"}, maps.Clone(marks), data); len(got) != 1 || got[0] != "annotations/note" {
		t.Fatalf("dropped = %v, want the annotation the operator applied and no longer sets (not env, someone else's, nor a key no longer there)", got)
	}
	if got := dropped(s, nil, map[string]string{ManagedKeysAnnotation: "", "note": "x"}, nil); !slices.Equal(got, []string{"data/secret", "labels/team"}) {
		t.Fatalf("dropped = %v, want what the earlier release wrote too", got)
	}
	if got := formerEntries(s, map[string]string{"team": "a"}, maps.Clone(marks), data); got.Len() != 0 {
		t.Fatalf("formerEntries = %v: nothing they own is dropped, so no takeover", got.UnsortedList())
	}
	if got := formerEntries(s, nil, maps.Clone(marks), data); got.Len() != 1 || !got.Has("manager") {
		t.Fatalf("formerEntries = %v, want the earlier release's, which owns the dropped label", got.UnsortedList())
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
	kcc.Spec.Target.Labels = nil
	if !needsApply(digested(s), kcc, data) {
		t.Fatal("a label the spec dropped is not to be removed")
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
	for _, e := range s.ManagedFields {
		if e.Manager == FieldManager && e.Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("the operator's create entry was not taken over: %+v", e)
		}
	}
}

func TestTheCacheKeepsOnlyTheOperatorsEntries(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		entry("tool", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:ca.crt":{}}}`),
		entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:data":{"f:secret":{}}}`),
	}}}
	out, _ := DigestSecret(s)
	if got := managersOf(out.(*corev1.Secret)); !slices.Equal(got, []string{FieldManager}) {
		t.Fatalf("the cache keeps the entries of %v", got)
	}
}

func managersOf(s *corev1.Secret) []string {
	var out []string
	for _, e := range s.ManagedFields {
		out = append(out, e.Manager)
	}
	return out
}
