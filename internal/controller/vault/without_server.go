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
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
)

// withoutServer handles a VaultApp with no server to write to: none is
// configured, its VaultServer is missing or grants it nothing usable (a
// CA it cannot read, two defaults), or it would move. It says why and
// writes nothing; the VaultServer watch brings it back, and a CA is
// looked at again each minute.
//
// A VaultApp deleted meanwhile is let go when it never wrote, or when its
// server is gone for good: the environment's Vault removed from the
// operator, or its VaultServer deleted, whose Vault keeps what it wrote
// (the admin's decision; a Warning Event says so). Otherwise it keeps its
// finalizer.
func (r *VaultAppReconciler) withoutServer(ctx context.Context, app *vaultv1beta1.VaultApp, why *errNoDestination) (ctrl.Result, *report, error) {
	wrote := app.Status.WroteToVault()
	gone := !wrote || why.reason == vaultv1beta1.ReasonServerNotFound || why.reason == vaultv1beta1.ReasonVaultNotConfigured
	if !app.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(app, Finalizer) {
			return ctrl.Result{}, nil, nil
		}
		if !gone {
			rep := failed(vaultv1beta1.ReasonDeleteFailed, why.msg)
			return ctrl.Result{}, &rep, errors.New(why.msg)
		}
		note, eventType := "nothing was written to Vault: nothing to remove", corev1.EventTypeNormal
		if wrote {
			note, eventType = "left what it wrote in Vault: "+why.msg, corev1.EventTypeWarning
		}
		r.Recorder.Eventf(app, nil, eventType, vaultv1beta1.ReasonDeleted, "Delete", "%s", note)
		return ctrl.Result{}, nil, finalizers.Release(ctx, r.Client, app, Finalizer)
	}
	if err := finalizers.Set(ctx, r.Client, app, Finalizer, true); err != nil {
		return ctrl.Result{}, nil, err
	}
	// No server: nothing says where a workload would log in.
	app.Status.Vault = nil
	rep := failed(why.reason, why.msg)
	if why.reason == vaultv1beta1.ReasonCAInvalid {
		return ctrl.Result{RequeueAfter: time.Minute}, &rep, nil
	}
	return ctrl.Result{}, &rep, nil
}
