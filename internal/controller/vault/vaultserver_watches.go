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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/requeue"
)

// serverOf maps a VaultApp to the VaultServer it wrote to, whose count
// may have changed.
func serverOf(_ context.Context, app client.Object) []reconcile.Request {
	if a, ok := app.(*vaultv1beta1.VaultApp); ok && a.Status.Server != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: a.Status.Server}}}
	}
	return nil
}

// SetupWithManager watches VaultServers' specs (their status is written
// here).
func (r *VaultServerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&vaultv1beta1.VaultServer{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{RateLimiter: requeue.RateLimiter(r.MaxBackoff)}).
		Named("vaultserver")
	// A VaultApp that wrote to a server, or went: the server's count.
	if r.everyVaultApp().Paged {
		b = b.Watches(&vaultv1beta1.VaultApp{}, handler.EnqueueRequestsFromMapFunc(serverOf), builder.WithPredicates(serverCountChanged))
	} else {
		tally := newServerTally(mgr.GetCache())
		if err := mgr.Add(tally); err != nil {
			return fmt.Errorf("count the servers' VaultApps: %w", err)
		}
		r.tally = tally
		b = b.WatchesRawSource(tally.Source())
	}
	// A VaultApp whose policy turned held by another cluster, or stopped
	// being: the server's check writes the request at once.
	b = b.Watches(&vaultv1beta1.VaultApp{}, handler.EnqueueRequestsFromMapFunc(r.checkAgain), builder.WithPredicates(wantsChanged))
	return b.Complete(r)
}

// checkAgain maps a VaultApp whose contest changed to its server, whose
// next pass checks in full (not only recounts): the registration says
// what this cluster asks for.
func (r *VaultServerReconciler) checkAgain(ctx context.Context, app client.Object) []reconcile.Request {
	reqs := serverOf(ctx, app)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range reqs {
		if r.recheck == nil {
			r.recheck = map[string]bool{}
		}
		r.recheck[req.Name] = true
	}
	return reqs
}

// minRecheck is the least time between a server's check and a full check
// its VaultApps' contests ask for: a tenant churning VaultApps whose
// names another cluster holds does not make the operator write its
// registration in Vault at the churn's pace.
const minRecheck = 10 * time.Second

// recheckIn is how soon the full check a contest asked for is due; false
// when none is asked.
func (r *VaultServerReconciler) recheckIn(name string) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recheck[name] {
		return 0, false
	}
	return max(minRecheck-time.Since(r.checked[name].at), 100*time.Millisecond), true
}

// wantsChanged passes a VaultApp whose policy turned held by another
// cluster, or no longer is (taken, or the VaultApp gone): this cluster's request for the name, in its
// registration, is written by the server's check, which would otherwise
// come at its interval (and the holder reads it at its own).
var wantsChanged = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	DeleteFunc: func(e event.DeleteEvent) bool {
		app, ok := e.Object.(*vaultv1beta1.VaultApp)
		return ok && heldByAnother(app)
	},
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*vaultv1beta1.VaultApp)
		after, ok2 := e.ObjectNew.(*vaultv1beta1.VaultApp)
		return ok1 && ok2 && heldByAnother(before) != heldByAnother(after)
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// heldByAnother: the VaultApp's policy is another cluster's, asked for.
func heldByAnother(app *vaultv1beta1.VaultApp) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypePolicySynced)
	return c != nil && c.Reason == vaultv1beta1.ReasonHeldByAnotherCluster
}

// serverCountChanged passes a VaultApp's creation, deletion, and a change
// of the server it wrote to.
var serverCountChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*vaultv1beta1.VaultApp)
		after, ok2 := e.ObjectNew.(*vaultv1beta1.VaultApp)
		return ok1 && ok2 && before.Status.Server != after.Status.Server
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}
