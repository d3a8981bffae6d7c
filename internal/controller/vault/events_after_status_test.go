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
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// conflicting makes the world's next n status writes fail with a conflict,
// as when the VaultApp changed while the pass ran.
func (w *world) conflicting(n int32) {
	var left atomic.Int32
	left.Store(n)
	w.r.Client = interceptor.NewClient(w.client.(client.WithWatch), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if left.Add(-1) >= 0 {
				return apierrors.NewConflict(vaultv1beta1.GroupVersion.WithResource("vaultapps").GroupResource(), obj.GetName(), errors.New("changed meanwhile"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}})
}

// recorded is the type and reason of every Event waiting, in order.
func (w *world) recorded() []string {
	var got []string
	for {
		select {
		case e := <-w.events.Events:
			f := strings.Fields(e)
			got = append(got, f[0]+" "+f[1])
		default:
			return got
		}
	}
}

// Events follow the status they report. A pass whose status write fails
// records what it changed in Vault (no later pass changes it again) and
// nothing that the next pass reports again: that pass's Warnings are
// recorded once, after its write. (The world's VaultApps are on the
// environment's Vault: a LegacyConfiguration Warning is new in each
// VaultApp's first written status.)
func TestEventsFollowTheStatusWrite(t *testing.T) {
	for name, tc := range map[string]struct {
		grant                 map[string]string
		before                func(w *world) // a pass that succeeds first, and what changes after it
		failed, written, next []string
	}{
		"a removal made in Vault is recorded once": {
			before: func(w *world) {
				w.reconcile()
				w.recorded()
				app := w.app()
				app.Spec.Policy.Rules[0].Path = "../other-team/db" // past the webhook
				if err := w.client.Update(context.Background(), app); err != nil {
					w.t.Fatal(err)
				}
			},
			failed:  []string{"Warning GrantRevoked"}, // removed from Vault; the status write fails
			written: []string{"Warning NotAllowed"},   // the refusal, once its status is written
		},
		"a change made in Vault is recorded once": {
			failed:  []string{"Normal Created"},
			written: []string{"Warning LegacyConfiguration"},
		},
		"a refusal is recorded once its status is written": {
			grant:   map[string]string{tenancy.AllowedCapabilitiesAnnotation: ""},
			written: []string{"Warning NotAllowed", "Warning LegacyConfiguration"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.grant, shopAPI())
			if tc.before != nil {
				tc.before(w)
			}
			w.conflicting(1)
			if _, err := w.r.Reconcile(context.Background(), w.request()); err == nil || !strings.Contains(err.Error(), "changed meanwhile") {
				t.Fatalf("the first pass's status write: %v, want a conflict", err)
			}
			for i, want := range [][]string{tc.failed, tc.written, tc.next} {
				if i > 0 {
					w.reconcile()
				}
				if got := w.recorded(); !slices.Equal(got, want) {
					t.Fatalf("pass %d recorded %q, want %q", i+1, got, want)
				}
			}
		})
	}
}
