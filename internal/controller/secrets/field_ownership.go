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
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Which fields of a target Secret are the operator's is what the API
// server records in managedFields (server-side apply): the operator writes
// under FieldManager, and a key, label or annotation it applied once and no
// longer applies is removed by the API server — unless someone else owns it
// too. The managed-keys annotation is still kept: an edit by hand (an
// Update) takes a field's ownership away, and the operator must still know
// the key it wrote in order to repair it.

// FieldManager is the field manager of every write to a target Secret.
const FieldManager = "vault-keycloak-operator"

// formerManager is the name earlier releases wrote target Secrets under
// (Update operations with no field manager set: the API server took the
// image's binary name). Any operator built the kubebuilder way shares it,
// so an entry of that name may hold another tool's fields too: only the
// data keys its managed-keys annotation lists are taken for the operator's
// to remove.
const formerManager = "manager"

// maxEntries bounds the managedFields the operator reads, and so what the
// cache keeps of a Secret anyone may label as the operator's: its own
// entries list a few keys and the spec's labels and annotations.
const maxEntries = 32 << 10

// ownedFields are data keys, labels and annotations of a Secret.
type ownedFields struct {
	data, labels, annotations []string
}

// fieldsOf reads an entry's FieldsV1 ({"f:data":{"f:key":{}}, ...}) with
// structured-merge-diff, the API server's own reader. An entry that does
// not decode owns nothing the operator acts on.
func fieldsOf(e metav1.ManagedFieldsEntry) ownedFields {
	set := &fieldpath.Set{}
	if e.FieldsV1 == nil || set.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())) != nil {
		return ownedFields{}
	}
	var f ownedFields
	name := func(pe fieldpath.PathElement) string {
		if pe.FieldName == nil {
			return ""
		}
		return *pe.FieldName
	}
	set.Iterate(func(p fieldpath.Path) {
		switch {
		case len(p) == 2 && name(p[0]) == fieldData && name(p[1]) != "":
			f.data = append(f.data, name(p[1]))
		case len(p) == 3 && name(p[0]) == fieldMetadata && name(p[1]) == fieldLabels && name(p[2]) != "":
			f.labels = append(f.labels, name(p[2]))
		case len(p) == 3 && name(p[0]) == fieldMetadata && name(p[1]) == fieldAnnotations && name(p[2]) != "":
			f.annotations = append(f.annotations, name(p[2]))
		}
	})
	for _, names := range [][]string{f.data, f.labels, f.annotations} {
		slices.Sort(names)
	}
	return f
}

// isOperatorEntry reports whether e, on s, records the operator's writes:
// any entry of FieldManager (its applies, its creates), or an earlier
// release's Update entry: one that owns the managed-keys mark (no other
// tool writes it) or a data key the mark lists (an apply may have taken
// the mark from it since).
func isOperatorEntry(s *corev1.Secret, e metav1.ManagedFieldsEntry) bool {
	if e.Subresource != "" || e.FieldsV1 == nil {
		return false
	}
	switch {
	case e.Manager == FieldManager:
		return e.Operation == metav1.ManagedFieldsOperationApply || e.Operation == metav1.ManagedFieldsOperationUpdate
	case e.Manager == formerManager && e.Operation == metav1.ManagedFieldsOperationUpdate:
		f := fieldsOf(e)
		return slices.Contains(f.annotations, ManagedKeysAnnotation) || slices.ContainsFunc(f.data, listedIn(s))
	}
	return false
}

// listedIn reports whether a data key is one the managed-keys mark of s
// lists.
func listedIn(s *corev1.Secret) func(string) bool {
	mine := managedKeys(s)
	return func(k string) bool { return slices.Contains(mine, k) }
}

// owns are the fields of s that entry e records as the operator's: all of
// an entry of its own name; of an earlier release's, only the data keys
// the managed-keys mark lists. What it may overwrite by force, and remove
// when the spec drops it.
func owns(s *corev1.Secret, e metav1.ManagedFieldsEntry) ownedFields {
	if !isOperatorEntry(s, e) {
		return ownedFields{}
	}
	f := fieldsOf(e)
	if e.Manager == FieldManager {
		return f
	}
	listed := listedIn(s)
	return ownedFields{data: slices.DeleteFunc(f.data, func(k string) bool { return !listed(k) })}
}

// operatorEntries keeps only the entries of s the operator reads, at most
// maxEntries bytes of them: what the cache holds of managedFields.
func operatorEntries(s *corev1.Secret) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	size := 0
	for _, e := range s.ManagedFields {
		if !isOperatorEntry(s, e) || size+len(e.FieldsV1.GetRawBytes()) > maxEntries {
			continue
		}
		size += len(e.FieldsV1.GetRawBytes())
		out = append(out, e)
	}
	return out
}

// dropped are the fields of s the operator owns and would no longer apply
// (keys, labels, annotations the spec once set and then dropped), as
// "data/k", "labels/k" and "annotations/k".
func dropped(s *corev1.Secret, labels, annotations map[string]string, data map[string][]byte) []string {
	out := make([]string, 0, 3*len(s.ManagedFields))
	for _, e := range s.ManagedFields {
		f := owns(s, e)
		out = append(out, absent(fieldData, f.data, data, s.Data)...)
		out = append(out, absent(fieldLabels, f.labels, labels, s.Labels)...)
		out = append(out, absent(fieldAnnotations, f.annotations, annotations, s.Annotations)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// absent are those of keys ("kind/k") not wanted but still there.
func absent[W, T any](kind string, keys []string, want map[string]W, there map[string]T) []string {
	var out []string
	for _, k := range keys {
		_, wanted := want[k]
		if _, held := there[k]; held && !wanted {
			out = append(out, kind+"/"+k)
		}
	}
	return out
}

// heldByUpdates are those of fields that an Update entry of the operator's
// (its create, an earlier release) owns: an apply that leaves them out
// would not remove them, as that entry still holds them.
func heldByUpdates(s *corev1.Secret, fields []string) []string {
	return claimed(s, fields, func(e metav1.ManagedFieldsEntry) ownedFields {
		if e.Operation != metav1.ManagedFieldsOperationUpdate {
			return ownedFields{}
		}
		return owns(s, e)
	})
}

// sharedWithOthers are those of fields that an entry not the operator's
// holds too, on a Secret read with all its managedFields: the operator
// leaves them to their other owner.
func sharedWithOthers(live *corev1.Secret, fields []string) []string {
	return claimed(live, fields, func(e metav1.ManagedFieldsEntry) ownedFields {
		if isOperatorEntry(live, e) {
			return ownedFields{}
		}
		return fieldsOf(e)
	})
}

// claimed are those of fields ("labels/k") that some entry of s holds, by
// what held says each entry holds.
func claimed(s *corev1.Secret, fields []string, held func(metav1.ManagedFieldsEntry) ownedFields) []string {
	var out []string
	for _, e := range s.ManagedFields {
		f := held(e)
		for _, name := range fields {
			kind, k, _ := strings.Cut(name, "/")
			if slices.Contains(map[string][]string{fieldData: f.data, fieldLabels: f.labels, fieldAnnotations: f.annotations}[kind], k) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// foreignMeta are the spec's labels and annotations that s holds with
// another value that no entry of the operator's owns: someone else's.
// Forcing them would take them from their owner, and a later spec that
// drops them would remove them; like a foreign data key, they are left.
func foreignMeta(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential) []string {
	var ownLabels, ownAnnotations []string
	for _, e := range s.ManagedFields {
		f := owns(s, e)
		ownLabels, ownAnnotations = append(ownLabels, f.labels...), append(ownAnnotations, f.annotations...)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(kcc.Spec.Target.Labels)) {
		if have, ok := s.Labels[k]; ok && have != kcc.Spec.Target.Labels[k] && !slices.Contains(ownLabels, k) {
			out = append(out, "label "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(kcc.Spec.Target.Annotations)) {
		if have, ok := s.Annotations[k]; ok && !sameAnnotation(have, kcc.Spec.Target.Annotations[k]) && !slices.Contains(ownAnnotations, k) {
			out = append(out, "annotation "+k)
		}
	}
	return out
}
