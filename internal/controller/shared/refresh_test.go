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

package shared

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRefreshSpreadsTheFirstCheckOnlyAndQueuesBehindEvents(t *testing.T) {
	var r Refresh
	const interval = time.Minute
	spread := map[time.Duration]bool{}
	for i := range 200 {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: string(rune('a'+i%26)) + string(rune('a'+i/26))}}
		first := r.After(req, interval)
		if first.RequeueAfter < interval || first.RequeueAfter >= 2*interval {
			t.Fatalf("first refresh after %s, want within [%s, %s)", first.RequeueAfter, interval, 2*interval)
		}
		spread[first.RequeueAfter] = true
		if next := r.After(req, interval); next.RequeueAfter != interval {
			t.Fatalf("a later refresh after %s, want exactly %s: drift must be found within one interval", next.RequeueAfter, interval)
		}
		if first.Priority == nil || *first.Priority != handler.LowPriority {
			t.Fatalf("a refresh is queued at priority %v, want low (%d)", first.Priority, handler.LowPriority)
		}
		r.Forget(req) // gone: a new object of that name is new again
		if again := r.After(req, interval); again.RequeueAfter < interval || again.RequeueAfter >= 2*interval {
			t.Fatalf("a forgotten object's refresh after %s", again.RequeueAfter)
		}
	}
	if len(spread) < 100 {
		t.Fatalf("200 first refreshes took %d distinct delays: not spread", len(spread))
	}
}

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
