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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
)

// withoutServer handles a VaultApp with no server to write to: none is
// configured, the VaultServer it names is missing, or it would move. It
// says why and writes nothing; the VaultServer watch brings it back.
//
// A VaultApp deleted meanwhile is let go: with no Vault configured nothing
// was written; with its VaultServer deleted, whatever it wrote stays in
// that Vault (deleting the VaultServer is the admin's decision), and the
// Event says so.
func (r *VaultAppReconciler) withoutServer(ctx context.Context, app *vaultv1beta1.VaultApp, why *errServer) (ctrl.Result, error) {
	if !app.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(app, Finalizer) {
			return ctrl.Result{}, nil
		}
		note := "no Vault configured: nothing to remove"
		eventType := corev1.EventTypeNormal
		if why.reason != shared.ReasonVaultNotConfigured {
			note, eventType = "left what it wrote in Vault: "+why.msg, corev1.EventTypeWarning
		}
		r.Recorder.Eventf(app, nil, eventType, shared.ReasonDeleted, "Delete", "%s", note)
		return ctrl.Result{}, shared.ReleaseFinalizer(ctx, r.Client, app, Finalizer)
	}
	before := app.Status.DeepCopy()
	if err := shared.SetFinalizer(ctx, r.Client, app, Finalizer, true); err != nil {
		return ctrl.Result{}, err
	}
	r.failAll(app, why.reason, why.msg)
	return ctrl.Result{}, r.updateStatus(ctx, app, before, corev1.EventTypeWarning, why.reason, why.msg)
}
