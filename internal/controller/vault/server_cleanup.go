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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// cleanupRecheck is how long after a cleanup pass that removed something
// the next one runs: a VaultApp reconcile that resolved the server just
// before its deletion began may still land a write meanwhile, and the
// finalizer goes only after a pass that finds nothing.
const cleanupRecheck = 2 * time.Second

// finalizeServer keeps a VaultServer with deletionPolicy Delete until the
// policies and roles this cluster wrote to its Vault are removed; with
// Retain (or a policy changed to it) the finalizer goes at once.
func (r *VaultServerReconciler) finalizeServer(ctx context.Context, server *vaultv1beta1.VaultServer) (ctrl.Result, error) {
	if server.Spec.DeletionPolicy != vaultv1beta1.DeletionPolicyDelete {
		return ctrl.Result{}, finalizers.Release(ctx, r.Client, server, vaultv1beta1.ServerFinalizer)
	}
	vc, err := r.Clients.For(ctx, server)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("clean VaultServer %s: %w", server.Name, err)
	}
	removed, err := cleanServer(ctx, vc, identityOn(server, r.ClusterUID), func(o vaultclient.Owner) (bool, error) {
		return r.writesElsewhere(ctx, o, server.Name)
	})
	if len(removed) > 0 {
		r.Recorder.Eventf(server, nil, corev1.EventTypeNormal, vaultv1beta1.ReasonDeleted, "Delete",
			"removed %d policies and roles this cluster wrote to Vault (deletionPolicy Delete): %s", len(removed), strings.Join(removed, ", "))
	}
	if err != nil {
		r.Recorder.Eventf(server, nil, corev1.EventTypeWarning, vaultv1beta1.ReasonDeleteFailed, "Delete",
			"keeps finalizer %s until what this cluster wrote to Vault is removed: %v", vaultv1beta1.ServerFinalizer, err)
		return ctrl.Result{}, err
	}
	if len(removed) > 0 {
		return ctrl.Result{RequeueAfter: cleanupRecheck}, nil
	}
	if err := unregister(ctx, vc, identityOn(server, r.ClusterUID)); err != nil {
		return ctrl.Result{}, fmt.Errorf("clean VaultServer %s: %w", server.Name, err)
	}
	r.Clients.Forget(server.Name)
	return ctrl.Result{}, finalizers.Release(ctx, r.Client, server, vaultv1beta1.ServerFinalizer)
}

// writesElsewhere reports whether the VaultApp a policy was written for
// exists and writes to another server: two servers may be one Vault (the
// environment's and a VaultServer at its address, with one identity), and
// what the other one's VaultApps have live is not this server's to remove.
func (r *VaultServerReconciler) writesElsewhere(ctx context.Context, o vaultclient.Owner, server string) (bool, error) {
	var app vaultv1beta1.VaultApp
	switch err := r.everyVaultApp().Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, &app); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read VaultApp %s/%s: %w", o.Namespace, o.Name, err)
	}
	return app.Status.Server != server && app.Status.WroteToVault(), nil
}

// cleanServer removes, from one Vault, every managed policy this cluster
// wrote for a VaultApp (the sweep's rule: this cluster's mark, a UID, the
// name it gives that VaultApp), with the role of its name that grants it,
// unless elsewhere says its VaultApp writes to another server. Other
// clusters' policies, retained ones and everything the operator did not
// write are left.
func cleanServer(ctx context.Context, v VaultAPI, id Identity, elsewhere func(vaultclient.Owner) (bool, error)) ([]string, error) {
	names, err := v.ListPolicies(ctx, id.ownNames())
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs error
	for _, name := range names {
		text, found, err := v.ReadPolicy(ctx, name)
		switch {
		case vaultclient.Forbidden(err):
			continue // out of the operator's reach: not its own
		case err != nil:
			errs = errors.Join(errs, err)
			continue
		case !found || !sweepable(id, name, vaultclient.MarkOf(text)):
			continue
		}
		if other, err := elsewhere(vaultclient.MarkOf(text).Owner); err != nil || other {
			errs = errors.Join(errs, err)
			continue
		}
		if err := deletePolicyAndItsRole(ctx, v, name, vaultclient.MarkOf(text).Owner.Namespace); err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errs
}

// unregister removes this cluster's registration from a Vault it no longer
// writes to, when it is this cluster's (a namesake's stays). A Vault policy
// that does not allow it leaves the registration: the name stays taken,
// and the deletion goes on.
func unregister(ctx context.Context, reg registrar, id Identity) error {
	own, found, err := reg.ReadRegistration(ctx, id.Cluster)
	if err == nil && found && own.ID == id.ID {
		err = reg.DeleteRegistration(ctx, id.Cluster)
	}
	if vaultclient.PolicyRefused(err) {
		logf.FromContext(ctx).Info("registration left in Vault: the operator's Vault policy does not allow its removal", "registration", vaultclient.RegistrationName(id.Cluster))
		return nil
	}
	return err
}
