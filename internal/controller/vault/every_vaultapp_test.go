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
	"strconv"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// pagedVaultApps serves n VaultApps in pages of the limit asked for, as
// the API server does, and counts the lists.
type pagedVaultApps struct {
	client.Reader
	n, lists int
	limits   []int64
	// failAt: the list of that number (from 1) fails, as an expired
	// continue token does.
	failAt int
}

func (p *pagedVaultApps) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	p.lists++
	if p.lists == p.failAt {
		return apierrors.NewResourceExpired("the continue token is too old")
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	p.limits = append(p.limits, o.Limit)
	from := 0
	if o.Continue != "" {
		from, _ = strconv.Atoi(o.Continue)
	}
	to := p.n
	if o.Limit > 0 {
		to = min(p.n, from+int(o.Limit))
	}
	l := list.(*vaultv1beta1.VaultAppList)
	for i := from; i < to; i++ {
		l.Items = append(l.Items, vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: fmt.Sprint("app-", i)}})
	}
	if to < p.n {
		l.Continue = strconv.Itoa(to)
	}
	return nil
}

// From the API server every VaultApp comes, in pages; from a cache, in one
// list.
func TestEveryVaultAppReadsEveryPage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		paged     bool
		n         int
		wantLists int
		wantLimit int64
	}{
		{"the API server, pages", true, 2*everyVaultAppPage + 1, 3, everyVaultAppPage},
		{"the API server, one page", true, 3, 1, everyVaultAppPage},
		{"a cache", false, 2*everyVaultAppPage + 1, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &pagedVaultApps{n: tc.n}
			seen := map[string]bool{}
			if err := (EveryVaultApp{Reader: r, Paged: tc.paged}).Each(context.Background(), func(a *vaultv1beta1.VaultApp) { seen[a.Name] = true }); err != nil {
				t.Fatal(err)
			}
			if len(seen) != tc.n {
				t.Errorf("%d VaultApps seen, want %d", len(seen), tc.n)
			}
			if r.lists != tc.wantLists {
				t.Errorf("%d lists, want %d", r.lists, tc.wantLists)
			}
			for _, l := range r.limits {
				if l != tc.wantLimit {
					t.Errorf("a list with limit %d, want %d", l, tc.wantLimit)
				}
			}
		})
	}
}

// A page that fails fails the whole: the count, the cleanup and the sweep
// act on every VaultApp or on none.
func TestEveryVaultAppFailsWithAPage(t *testing.T) {
	r := &pagedVaultApps{n: 2*everyVaultAppPage + 1, failAt: 2}
	err := (EveryVaultApp{Reader: r, Paged: true}).Each(context.Background(), func(*vaultv1beta1.VaultApp) {})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("a failed second page: Each returned %v, want the page's error", err)
	}
}
