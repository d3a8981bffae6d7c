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

// Package pages lists every object of a kind for the jobs that must see
// all of them, from the manager's cache or, where the cache holds one
// shard's range alone, from the API server in pages.
package pages

import (
	"context"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Size is how many objects one page of the API server holds.
const Size = 500

// Each lists with r and calls fn with each page's list: in pages of Size
// when paged (r is the API server), else at once, sharing the cache's
// objects (fn must not change them). Each page is a list of its own. A
// page that fails fails the whole, so that callers act on every object or
// on none.
func Each[T any, L interface {
	*T
	client.ObjectList
}](ctx context.Context, r client.Reader, paged bool, fn func(L) error, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	o.UnsafeDisableDeepCopy = ptr.To(!paged)
	for {
		if paged {
			o.Limit = Size
		}
		list := L(new(T))
		if err := r.List(ctx, list, o); err != nil {
			return err
		}
		if err := fn(list); err != nil {
			return err
		}
		if !paged || list.GetContinue() == "" {
			return nil
		}
		o.Continue = list.GetContinue()
	}
}
