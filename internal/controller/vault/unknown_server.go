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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// onUnknownServer handles a VaultApp whose named VaultServer grants its
// namespace nothing and which never recorded writing there. It answers as
// for a missing server, but first removes what this cluster wrote there
// for it: a pass may have written before its status write failed (a
// tenant's edits can make every one conflict), and the status alone would
// then leave that policy live. A failure reads as the same answer and is
// retried; a deletion goes whatever happens (the orphan sweep removes what
// is left once the VaultApp is gone).
func (r *pass) onUnknownServer(ctx context.Context) (ctrl.Result, *report, error) {
	deleted := !r.app.DeletionTimestamp.IsZero()
	if deleted && !controllerutil.ContainsFinalizer(r.app, Finalizer) {
		return ctrl.Result{}, nil, nil
	}
	removed, err := r.removeWrittenHere(ctx)
	if deleted {
		note := "nothing was written to Vault: nothing to remove"
		if removed && err == nil {
			note = "removed policy and role " + r.name + " from Vault"
		}
		if err != nil {
			logf.FromContext(ctx).Error(err, "remove what a deleted VaultApp may have written to a server that grants it nothing; the orphan sweep will", "policy", r.name)
		}
		r.Recorder.Eventf(r.app, nil, corev1.EventTypeNormal, vaultv1beta1.ReasonDeleted, "Delete", "%s", note)
		return ctrl.Result{}, nil, finalizers.Release(ctx, r.Client, r.app, Finalizer)
	}
	if ferr := finalizers.Set(ctx, r.Client, r.app, Finalizer, true); ferr != nil {
		return ctrl.Result{}, nil, ferr
	}
	r.app.Status.Vault = nil
	rep := failed(vaultv1beta1.ReasonServerNotFound, r.server.Unknown)
	switch {
	case err != nil:
		return ctrl.Result{}, &rep, fmt.Errorf("remove what VaultApp %s/%s may have written to a server that grants it nothing: %w", r.app.Namespace, r.app.Name, err)
	case removed:
		// Its team knew the server; the next pass answers as for a
		// missing one.
		rep = refused(vaultv1beta1.ReasonGrantRevoked, fmt.Sprintf("removed policy and role %s from Vault: %s", r.name, r.server.Unknown))
		rep.changedVault = true
		return ctrl.Result{RequeueAfter: time.Second}, &rep, nil
	}
	return ctrl.Result{}, &rep, nil
}

// removeWrittenHere removes the VaultApp's policy and role only when the
// policy's mark says this cluster wrote it for this VaultApp: on a server
// the namespace is not granted, nothing else is touched (no adoption of an
// unmarked or older release's policy, no role judged on its shape alone).
func (r *pass) removeWrittenHere(ctx context.Context) (bool, error) {
	text, found, err := r.Vault.ReadPolicy(ctx, r.name)
	if err != nil || !found {
		return false, err
	}
	mark := vaultclient.MarkOf(text)
	if !mark.Managed || mark.Retained || !r.Identity.wrote(mark.Owner) || mark.Owner.Namespace != r.app.Namespace || mark.Owner.Name != r.app.Name {
		return false, nil
	}
	role, roleFound, err := r.Vault.ReadRole(ctx, r.name)
	if err != nil {
		return false, err
	}
	if roleFound && roleShapedFor(role, r.app.Namespace, r.name) {
		if err := r.Vault.DeleteRole(ctx, r.name); err != nil {
			return false, err
		}
	}
	return true, r.Vault.DeletePolicy(ctx, r.name)
}

// unknownServer is a server the VaultApp names, never recorded writing to,
// and that grants its namespace nothing. The status may not record a write
// whose status write failed: what is in Vault decides (onUnknownServer).
func (v *ClusterDestinations) unknownServer(ctx context.Context, s *vaultv1beta1.VaultServer, asMissing string) (*Destination, error) {
	d, err := v.serverOf(ctx, s)
	if err != nil { // a CA or a client that cannot be had: the same answer
		return nil, &errNoDestination{vaultv1beta1.ReasonServerNotFound, asMissing}
	}
	d.Unknown = asMissing
	return d, nil
}
