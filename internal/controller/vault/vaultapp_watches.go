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
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/requeue"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/watches"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
)

// SetupWithManager watches VaultApps, and Namespaces because their
// annotation decides what the VaultApps inside may have.
func (r *VaultAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Vault != nil {
		if err := r.Identity.Validate(); err != nil {
			return err
		}
	}

	if r.Outage == nil {
		r.Outage = outage.New(0)
	}
	if err := mgr.Add(r.Outage); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		// Spec changes, deletion, a finalizer removed by hand: not the
		// operator's own status writes. Drift in Vault is found by the
		// periodic refresh.
		For(&vaultv1beta1.VaultApp{}, builder.WithPredicates(predicate.Or(watches.SpecChangedOrFinalizerMissing(Finalizer),
			watches.AnnotationsChanged(vaultv1beta1.RefreshRequestAnnotation)))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.vaultAppsIn), builder.WithPredicates(watches.NamespaceGrantsChanged))
	if r.Destinations != nil {
		// A VaultServer created, changed or made the default: the
		// VaultApps that use it, or would.
		// A VaultServer deleted: its client dropped (server_gone.go).
		servers := handler.EnqueueRequestsFromMapFunc(r.vaultAppsOf)
		if f, ok := r.Destinations.(forgetter); ok {
			servers = watches.ForgetOnDelete{EventHandler: servers, Forget: f.Forget}
		}
		b = b.Watches(&vaultv1beta1.VaultServer{}, servers,
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})))
		// A policy name another cluster began or ceased to ask for: the
		// VaultApp holding it writes its role's token TTLs (contested.go).
		b = b.Watches(&vaultv1beta1.VaultServer{}, handler.Funcs{UpdateFunc: r.contestChanged})
	}
	return b.
		// VaultApps that waited for Vault, once it answers again.
		WatchesRawSource(r.Outage.Source()).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles),
			RateLimiter:             requeue.RateLimiter(r.MaxBackoff),
		}).
		Named("vaultapp").
		Complete(r.Shard.Filter(r, r.Gate))
}

// vaultAppsOf maps a VaultServer to the VaultApps that name it, wrote to
// it, have no server yet (it may have become the default), or wrote to
// the environment's Vault (it may write to the same place: chooseServer's
// twins).
func (r *VaultAppReconciler) vaultAppsOf(ctx context.Context, server client.Object) []reconcile.Request {
	var list vaultv1beta1.VaultAppList
	if err := r.List(ctx, &list, client.DisableReadYourWritesConsistency); err != nil {
		logf.FromContext(ctx).Error(err, "list VaultApps of a VaultServer", "server", server.GetName())
		return nil
	}
	return watches.Requests(list.Items, func(a *vaultv1beta1.VaultApp) bool {
		named := a.Spec.ServerRef != nil && a.Spec.ServerRef.Name == server.GetName()
		onEnv := a.Status.Server == "" && a.Status.WroteToVault()
		return named || a.Status.Server == server.GetName() || (a.Spec.ServerRef == nil && !a.Status.WroteToVault()) || onEnv
	})
}

func (r *VaultAppReconciler) vaultAppsIn(ctx context.Context, ns client.Object) []reconcile.Request {
	var list vaultv1beta1.VaultAppList
	if err := r.List(ctx, &list, client.InNamespace(ns.GetName()), client.DisableReadYourWritesConsistency); err != nil {
		logf.FromContext(ctx).Error(err, "list VaultApps of a namespace", "namespace", ns.GetName())
		return nil
	}
	return watches.Requests[vaultv1beta1.VaultApp](list.Items, nil)
}

// contestChanged queues the VaultApps on a server whose policy name
// another cluster began or ceased to ask for.
func (r *VaultAppReconciler) contestChanged(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	before, ok1 := e.ObjectOld.(*vaultv1beta1.VaultServer)
	after, ok2 := e.ObjectNew.(*vaultv1beta1.VaultServer)
	if !ok1 || !ok2 || slices.Equal(before.Status.ContestedPolicies, after.Status.ContestedPolicies) {
		return
	}
	moved := map[string]bool{}
	for _, name := range before.Status.ContestedPolicies {
		moved[name] = !moved[name]
	}
	for _, name := range after.Status.ContestedPolicies {
		moved[name] = !moved[name]
	}
	var list vaultv1beta1.VaultAppList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy, client.DisableReadYourWritesConsistency); err != nil {
		logf.FromContext(ctx).Error(err, "list VaultApps of a VaultServer", "server", after.Name)
		return
	}
	for _, req := range watches.Requests(list.Items, func(a *vaultv1beta1.VaultApp) bool {
		return a.Status.Server == after.Name && moved[a.Status.PolicyName]
	}) {
		q.Add(req)
	}
}
