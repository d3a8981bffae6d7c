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

package watches

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestOnlyGrantChangesOfANamespaceQueueItsObjects(t *testing.T) {
	ns := func(mutate func(*corev1.Namespace)) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"g": "x"}, ResourceVersion: "1"}}
		mutate(n)
		return n
	}
	now := metav1.Now()
	for name, tc := range map[string]struct {
		mutate func(*corev1.Namespace)
		want   bool
	}{
		"annotation changed": {func(n *corev1.Namespace) { n.Annotations["g"] = "y" }, true},
		"annotation removed": {func(n *corev1.Namespace) { n.Annotations = nil }, true},
		"label changed":      {func(n *corev1.Namespace) { n.Labels["a"] = "2" }, true},
		"deletion began":     {func(n *corev1.Namespace) { n.DeletionTimestamp = &now }, true},
		"status only":        {func(n *corev1.Namespace) { n.Status.Phase = corev1.NamespaceActive; n.ResourceVersion = "2" }, false},
		"managedFields only": {func(n *corev1.Namespace) { n.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}} }, false},
		"nothing but resync": {func(*corev1.Namespace) {}, false},
	} {
		got := NamespaceGrantsChanged.Update(event.UpdateEvent{ObjectOld: ns(func(*corev1.Namespace) {}), ObjectNew: ns(tc.mutate)})
		if got != tc.want {
			t.Errorf("%s: passed %v, want %v", name, got, tc.want)
		}
	}
}

func TestOwnWritesDoNotReconcileButARemovedFinalizerDoes(t *testing.T) {
	const f = "example.com/cleanup"
	obj := func(generation int64, finalizers ...string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Generation: generation, Finalizers: finalizers}}
	}
	p := SpecChangedOrFinalizerMissing(f)
	for name, tc := range map[string]struct {
		old, new *corev1.ConfigMap
		want     bool
	}{
		"own status write":        {obj(1, f), obj(1, f), false},
		"spec change":             {obj(1, f), obj(2, f), true},
		"finalizer removed":       {obj(1, f), obj(1), true},
		"another finalizer added": {obj(1, f), obj(1, f, "other"), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: passed %v, want %v", name, got, tc.want)
		}
	}
	if !p.Create(event.CreateEvent{Object: obj(1)}) || !p.Delete(event.DeleteEvent{Object: obj(1)}) {
		t.Error("create and delete events must pass")
	}
}

func TestARequestAnnotationReconcilesOtherAnnotationsDoNot(t *testing.T) {
	const key = "example.com/refresh-request"
	obj := func(annotations map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: annotations}}
	}
	p := AnnotationsChanged(key)
	for name, tc := range map[string]struct {
		old, new map[string]string
		want     bool
	}{
		"a first request":       {nil, map[string]string{key: "r1"}, true},
		"a new request":         {map[string]string{key: "r1"}, map[string]string{key: "r2"}, true},
		"the request withdrawn": {map[string]string{key: "r1"}, nil, true},
		"the same request":      {map[string]string{key: "r1"}, map[string]string{key: "r1", "other": "x"}, false},
		"another annotation":    {nil, map[string]string{"other": "x"}, false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: obj(tc.old), ObjectNew: obj(tc.new)}); got != tc.want {
			t.Errorf("%s: passed %v, want %v", name, got, tc.want)
		}
	}
	if p.Create(event.CreateEvent{Object: obj(map[string]string{key: "r1"})}) {
		t.Error("a create passed: the spec predicate decides creates")
	}
}
