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
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
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

// formerManagers are the names under which the operator wrote target
// Secrets with Update operations: releases up to 0.x, which set no field
// manager (the API server took "manager", the name of the image's
// binary), and this release's creates (a create cannot be an apply). Their
// entries are merged into the operator's apply entry (csaupgrade) the first
// time a Secret needs a write anyway: no Secret is rewritten for the
// upgrade alone.
var formerManagers = sets.New(FieldManager, "manager")

// maxEntry bounds the managedFields entry the operator reads, and so what
// the cache keeps of a Secret anyone may label as the operator's: its own
// entries list a few keys and the spec's labels and annotations.
const maxEntry = 32 << 10

// ownedFields are the data keys, labels and annotations of one
// managedFields entry.
type ownedFields struct {
	data, labels, annotations []string
}

// fieldsOf reads an entry's FieldsV1 ({"f:data":{"f:key":{}}, ...}). An
// entry that does not decode owns nothing the operator acts on.
func fieldsOf(e metav1.ManagedFieldsEntry) ownedFields {
	var tree struct {
		Data     map[string]json.RawMessage `json:"f:data"`
		Metadata struct {
			Labels      map[string]json.RawMessage `json:"f:labels"`
			Annotations map[string]json.RawMessage `json:"f:annotations"`
		} `json:"f:metadata"`
	}
	if e.FieldsV1 == nil || json.Unmarshal(e.FieldsV1.GetRawBytes(), &tree) != nil {
		return ownedFields{}
	}
	names := func(m map[string]json.RawMessage) []string {
		var out []string
		for k := range m {
			if name, ok := strings.CutPrefix(k, "f:"); ok {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	return ownedFields{data: names(tree.Data), labels: names(tree.Metadata.Labels), annotations: names(tree.Metadata.Annotations)}
}

// isOperatorEntry reports whether e records the operator's writes: its
// apply entry, or a former manager's Update entry that owns the
// managed-keys mark (no other tool writes it, so a person's "manager"
// entry is not taken for the operator's).
func isOperatorEntry(e metav1.ManagedFieldsEntry) bool {
	if e.Subresource != "" || e.FieldsV1 == nil || len(e.FieldsV1.GetRawBytes()) > maxEntry {
		return false
	}
	if e.Operation == metav1.ManagedFieldsOperationApply {
		return e.Manager == FieldManager
	}
	return e.Operation == metav1.ManagedFieldsOperationUpdate && formerManagers.Has(e.Manager) &&
		slices.Contains(fieldsOf(e).annotations, ManagedKeysAnnotation)
}

// formerEntries are the managers of s's Update entries that own a field
// the operator no longer applies: merged into its apply entry
// (csaupgrade) before it applies, so that the apply removes the field. An
// entry that owns nothing dropped is left: a repair needs no takeover.
func formerEntries(s *corev1.Secret, labels, annotations map[string]string, data map[string][]byte) sets.Set[string] {
	out := sets.New[string]()
	for _, e := range s.ManagedFields {
		if e.Operation == metav1.ManagedFieldsOperationUpdate && isOperatorEntry(e) && len(droppedFrom(s, e, labels, annotations, data)) > 0 {
			out.Insert(e.Manager)
		}
	}
	return out
}

// operatorEntries keeps only the entries the operator reads: what the
// cache holds of a Secret's managedFields.
func operatorEntries(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if isOperatorEntry(e) {
			out = append(out, e)
		}
	}
	return out
}

// dropped are the fields of s that the operator owns and would no longer
// apply (keys, labels, annotations the spec once set and then dropped), as
// "data/k", "labels/k" and "annotations/k". Applying removes them.
func dropped(s *corev1.Secret, labels, annotations map[string]string, data map[string][]byte) []string {
	var out []string
	for _, e := range s.ManagedFields {
		if isOperatorEntry(e) {
			out = append(out, droppedFrom(s, e, labels, annotations, data)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// droppedFrom are the fields of s that entry e owns and the operator would
// no longer apply.
func droppedFrom(s *corev1.Secret, e metav1.ManagedFieldsEntry, labels, annotations map[string]string, data map[string][]byte) []string {
	var out []string
	f := fieldsOf(e)
	for _, k := range f.data {
		if _, want := data[k]; !want {
			if _, there := s.Data[k]; there {
				out = append(out, "data/"+k)
			}
		}
	}
	for _, k := range f.labels {
		if _, want := labels[k]; !want {
			if _, there := s.Labels[k]; there {
				out = append(out, "labels/"+k)
			}
		}
	}
	for _, k := range f.annotations {
		if _, want := annotations[k]; !want {
			if _, there := s.Annotations[k]; there {
				out = append(out, "annotations/"+k)
			}
		}
	}
	return out
}
