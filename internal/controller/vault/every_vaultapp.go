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

package vault

import (
	"context"
	"fmt"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// EveryVaultApp reads the VaultApps of every namespace, for the jobs done
// once per cluster: a server's count, its cleanup, the orphan sweep.
//
// Where the manager's cache holds every namespace, Reader is that cache.
// Where the API server sends each shard its own namespaces alone (a split
// cache), shard 0 holds no more than the others, and Reader is the API
// server, read in pages: these jobs run every few minutes, not per event.
type EveryVaultApp struct {
	Reader client.Reader
	// Paged: Reader is the API server.
	Paged bool
}

// everyVaultAppPage is how many VaultApps one page of the API server holds.
const everyVaultAppPage = 500

// Each calls fn with every VaultApp, which fn must not change (from a
// cache it shares its maps and slices with the cache's object). A page
// that fails (an expired continue token among others) fails the whole:
// callers act on every VaultApp or on none.
func (e EveryVaultApp) Each(ctx context.Context, fn func(*vaultv1beta1.VaultApp)) error {
	// No wait for this process's own writes: a count and a sweep read
	// what the cache holds (manager.ClientOptions).
	opts := &client.ListOptions{UnsafeDisableDeepCopy: ptr.To(!e.Paged)}
	client.DisableReadYourWritesConsistency.ApplyToList(opts)
	for {
		if e.Paged {
			opts.Limit = everyVaultAppPage
		}
		// A list of its own per page: a decode into the last page's
		// would keep its continue token when the next has none.
		var list vaultv1beta1.VaultAppList
		if err := e.Reader.List(ctx, &list, opts); err != nil {
			return fmt.Errorf("list VaultApps: %w", err)
		}
		for i := range list.Items {
			fn(&list.Items[i])
		}
		if !e.Paged || list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// Get reads one VaultApp, of any namespace.
func (e EveryVaultApp) Get(ctx context.Context, key client.ObjectKey, app *vaultv1beta1.VaultApp) error {
	return e.Reader.Get(ctx, key, app)
}
