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

// Package lookup gives the admission webhooks a reader that is cheap and
// never behind: the manager's cache first, the API server when the cache
// has not seen the object yet. "kubectl create ns shop && kubectl apply -f
// vaultapp.yaml" must not be refused because the namespace's watch event
// is still on its way.
package lookup

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheFirst reads from Cache, and from API what Cache does not hold.
type CacheFirst struct {
	Cache, API client.Reader
	// FromAPI, when it holds for an object, reads it from the API server
	// alone: the servers a tenant names. Read cache first, one that exists
	// answered sooner than a missing one, and she could tell which exist by
	// the time an admission takes.
	FromAPI func(client.Object) bool
}

// Get reads obj from the cache, or from the API server when the cache says
// it does not exist.
func (r CacheFirst) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.FromAPI != nil && r.FromAPI(obj) {
		return r.API.Get(ctx, key, obj, opts...)
	}
	// Admission never follows a write of this process: no wait for one.
	err := r.Cache.Get(ctx, key, obj, append(opts, client.DisableReadYourWritesConsistency)...)
	if apierrors.IsNotFound(err) {
		return r.API.Get(ctx, key, obj, opts...)
	}
	return err
}

// List lists from the cache.
func (r CacheFirst) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.Cache.List(ctx, list, append(opts, client.DisableReadYourWritesConsistency)...)
}
