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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/clusterevent"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// finalize removes the policy and role the operator wrote, or, with
// deletionPolicy Retain where the namespace allows it, releases them (the
// policy's mark turns to "retained"). It works for a VaultApp whose creation
// failed: deleting what does not exist is no error. Objects the operator did
// not write are left as they are.
func (r *pass) finalize(ctx context.Context) (ctrl.Result, *report, error) {
	if !controllerutil.ContainsFinalizer(r.app, Finalizer) {
		return ctrl.Result{}, nil, nil
	}
	reason, note := vaultv1beta1.ReasonDeleted, "removed policy and role "+r.name+" from Vault"
	var err error
	switch {
	case r.app.Spec.DeletionPolicy == vaultv1beta1.DeletionPolicyRetain && r.retainAllowed(ctx, r.app.Namespace, r.server.Spec) && len(r.app.Spec.Policy.VaultPaths) == 0:
		reason, note = vaultv1beta1.ReasonRetained, "left policy and role "+r.name+" in Vault (deletionPolicy Retain); the operator no longer manages them"
		err = r.release(ctx)
	default:
		switch {
		case r.app.Spec.DeletionPolicy != vaultv1beta1.DeletionPolicyRetain:
		case len(r.app.Spec.Policy.VaultPaths) > 0:
			// A retained policy is never revisited: a VaultServer's grant
			// taken back could not shrink it.
			note += " (deletionPolicy Retain does not keep a policy with vaultPaths: its VaultServer's grants must be able to shrink it)"
		default:
			note += " (deletionPolicy Retain is not allowed in this namespace: " + retainGrantHint(r.server.Spec) + ")"
		}
		var removed bool
		removed, err = r.removeOwned(ctx)
		switch {
		case err == nil && !removed:
			note = "nothing to remove from Vault"
		case err == nil && r.contested():
			note += removedContestedNote(r.name)
		}
	}
	var notOwned *errNotOwned
	if err == nil || errors.As(err, &notOwned) {
		// Deleted before its move to a new name was done: the former
		// name goes too (or is released), whatever held the new one.
		if ferr := r.finalizeFormer(ctx, r.before.PolicyName, reason == vaultv1beta1.ReasonRetained); ferr != nil {
			err = ferr
		}
	}
	if errors.As(err, &notOwned) {
		// Never touched; the VaultApp goes, and says what it left.
		reason, note, err = vaultv1beta1.ReasonNotOwned, err.Error(), nil
	}
	if err != nil {
		rep := failed(r.failure(err, vaultv1beta1.ReasonDeleteFailed))
		rep.apply(r.app) // the namespace is told only of a new failure
		r.tellTerminatingNamespace(ctx, r.app, r.before, rep.reason, rep.note)
		return ctrl.Result{}, &rep, err
	}
	eventType := corev1.EventTypeNormal
	if reason == vaultv1beta1.ReasonNotOwned {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(r.app, nil, eventType, reason, "Delete", "%s", note)
	return ctrl.Result{}, nil, finalizers.Release(ctx, r.Client, r.app, Finalizer)
}

// tellTerminatingNamespace records the failure on the namespace too when it
// is being deleted: no Event can be created inside a terminating namespace,
// and the admin deleting it reads 'kubectl describe namespace' to learn
// what holds it. The Event goes to kube-system, never default, where any
// tenant reads another team's names and failures (clusterevent.Record).
// Once per change of the VaultApp's conditions.
func (r *VaultAppReconciler) tellTerminatingNamespace(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, reason, msg string) {
	if equality.Semantic.DeepEqual(before.Conditions, app.Status.Conditions) {
		return
	}
	var ns corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: app.Namespace}, &ns); err != nil || ns.DeletionTimestamp.IsZero() {
		return
	}
	note := fmt.Sprintf("VaultApp %s keeps finalizer %s until its policy and role are removed from Vault: %s", app.Name, Finalizer, msg)
	if err := clusterevent.Record(ctx, r.Client, &ns, app, corev1.EventTypeWarning, reason, "Delete", note); err != nil {
		logf.FromContext(ctx).Error(err, "record the Event on the terminating namespace", "namespace", app.Namespace)
	}
}

// retainAllowed reads the grant for Retain: the VaultServer's, or on the
// environment's Vault the namespace's annotation. A namespace that cannot
// be read (being deleted, gone) is granted nothing.
func (r *VaultAppReconciler) retainAllowed(ctx context.Context, namespace string, server *vaultv1beta1.VaultServer) bool {
	var ns corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		return false
	}
	return tenancy.RetainAllowedOn(&ns, server) && ns.DeletionTimestamp.IsZero()
}

// release marks the policy as retained, so that neither this operator (the
// orphan sweep, a later VaultApp of the same name) nor anyone reading Vault
// takes it for a managed one. The role stays as it is.
func (r *pass) release(ctx context.Context) error {
	have, err := r.observe(ctx)
	if err != nil || !have.policyFound {
		return err
	}
	return r.Vault.WritePolicy(ctx, r.name, vaultclient.RetainedText(have.policy, r.ownerOf()))
}

// finalizeFormer removes, or with Retain releases, what the VaultApp still
// has under its former name.
func (r *pass) finalizeFormer(ctx context.Context, former string, retain bool) error {
	if former == "" || former == r.name {
		return nil
	}
	if !retain {
		return r.leaveFormerName(ctx, former)
	}
	text, ours, err := r.formerPolicy(ctx, former)
	if err != nil || !ours {
		return err
	}
	return r.Vault.WritePolicy(ctx, former, vaultclient.RetainedText(text, r.ownerOf()))
}

// retainGrantHint says where the cluster admin allows Retain.
func retainGrantHint(server *vaultv1beta1.VaultServer) string {
	if server == nil {
		return "the cluster admin allows it with " + tenancy.AllowRetainAnnotation + "=true"
	}
	return "the cluster admin allows it with allowRetain in VaultServer " + server.Name + "'s spec.access"
}
