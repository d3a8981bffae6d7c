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

package migration

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Someone else's write between the listing and the rewrite (a tenant
// updating her own object, again and again) stored the object in the
// storage version: the rewrite is done, not failed.
func TestRewriteTakesAConflictAsDone(t *testing.T) {
	gr := schema.GroupResource{Group: "vault.exemple.com", Resource: "vaultapps"}
	for _, tt := range []struct {
		name    string
		err     error
		failure bool
	}{
		{"written", nil, false},
		{"written by someone else meanwhile", apierrors.NewConflict(gr, "api", errors.New("the object has been modified")), false},
		{"deleted meanwhile", apierrors.NewNotFound(gr, "api"), false},
		{"refused", apierrors.NewForbidden(gr, "api", errors.New("no")), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			updates := 0
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
					updates++
					return tt.err
				},
			}).Build()
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: gr.Group, Version: "v1beta1", Kind: "VaultApp"})
			obj.SetNamespace("shop")
			obj.SetName("api")
			err := (&Migrator{Client: c}).rewrite(context.Background(), obj)
			if (err != nil) != tt.failure || updates != 1 {
				t.Fatalf("rewrite: %v after %d updates", err, updates)
			}
		})
	}
}
