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

package lookup

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestANamespaceTheCacheHasNotSeenYetIsFound(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	cache := fake.NewClientBuilder().WithScheme(scheme).Build()
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}).Build()
	var ns corev1.Namespace
	if err := (CacheFirst{Cache: cache, API: api}).Get(context.Background(), client.ObjectKey{Name: "shop"}, &ns); err != nil {
		t.Fatalf("a namespace only the API server knows yet: %v", err)
	}
}

// Kinds read from the API server alone never touch the cache: a present
// and a missing one cost the same round trip.
func TestKindsReadFromTheAPIAloneSkipTheCache(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cached-only"}}).Build()
	api := fake.NewClientBuilder().WithScheme(scheme).Build()
	r := CacheFirst{Cache: cache, API: api, FromAPI: func(o client.Object) bool { _, ns := o.(*corev1.Namespace); return ns }}
	var ns corev1.Namespace
	if err := r.Get(context.Background(), client.ObjectKey{Name: "cached-only"}, &ns); err == nil {
		t.Fatal("read from the cache a kind that is read from the API server alone")
	}
}
