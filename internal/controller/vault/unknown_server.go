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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
)

// onUnknownServer handles a VaultApp whose named VaultServer grants its
// namespace nothing and which never recorded writing there. It answers as
// for a missing server, but first removes what it owns there: a pass may
// have written before its status write failed (a tenant's edits can make
// every one conflict), and the status alone would then leave that policy
// live. Any failure reads as the same answer, and is retried.
func (r *pass) onUnknownServer(ctx context.Context) (ctrl.Result, *report, error) {
	deleted := !r.app.DeletionTimestamp.IsZero()
	if deleted && !controllerutil.ContainsFinalizer(r.app, Finalizer) {
		return ctrl.Result{}, nil, nil
	}
	removed, err := r.removeOwned(ctx)
	if err == nil {
		err = r.leaveFormerName(ctx, r.before.PolicyName)
	}
	if err != nil {
		rep := failed(vaultv1beta1.ReasonServerNotFound, r.server.Unknown)
		return ctrl.Result{}, &rep, fmt.Errorf("remove what VaultApp %s/%s may have written to a server that grants it nothing: %w", r.app.Namespace, r.app.Name, err)
	}
	if deleted {
		note := "nothing was written to Vault: nothing to remove"
		if removed {
			note = "removed policy and role " + r.name + " from Vault"
		}
		r.Recorder.Eventf(r.app, nil, corev1.EventTypeNormal, vaultv1beta1.ReasonDeleted, "Delete", "%s", note)
		return ctrl.Result{}, nil, finalizers.Release(ctx, r.Client, r.app, Finalizer)
	}
	if err := finalizers.Set(ctx, r.Client, r.app, Finalizer, true); err != nil {
		return ctrl.Result{}, nil, err
	}
	r.app.Status.Vault = nil
	rep := failed(vaultv1beta1.ReasonServerNotFound, r.server.Unknown)
	if removed {
		rep = refused(vaultv1beta1.ReasonGrantRevoked, fmt.Sprintf("removed policy and role %s from Vault: %s", r.name, r.server.Unknown))
		rep.changedVault = true
	}
	return ctrl.Result{}, &rep, nil
}
