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

// Package vault reconciles VaultApps: it keeps one Vault ACL policy and one
// Kubernetes-auth role per VaultApp equal to its spec.
package vault

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/requeue"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Finalizer keeps a VaultApp until its policy and role are removed from Vault.
const Finalizer = vaultv1beta1.CleanupFinalizer

// VaultAppReconciler keeps Vault in step with VaultApps.
type VaultAppReconciler struct {
	client.Client
	// Destinations resolves each VaultApp to its Vault; when nil, every
	// VaultApp uses Vault and Identity below.
	Destinations Destinations
	// Vault is the Vault of the operator's environment, nil when it runs
	// without a Vault address.
	Vault    VaultAPI
	Recorder events.EventRecorder
	// Identity is this cluster's in the marks and names it writes to Vault.
	Identity Identity
	// MaxConcurrentReconciles is how many VaultApps are reconciled at once.
	MaxConcurrentReconciles int
	// Shard is the part of the namespaces this replica reconciles; the
	// zero value is all of them.
	Shard shard.Shard
	// Gate holds reconciles back while leaders of another shard count
	// lead; nil is open.
	Gate *shard.Gate
	// MaxBackoff caps the wait between two retries after a Vault failure.
	MaxBackoff time.Duration
	// Outage holds the VaultApps that wait for Vault to answer again;
	// SetupWithManager makes one when nil.
	Outage *outage.Tracker

	refresh requeue.Refresh
}

// pass is one reconcile of one VaultApp against the server it resolved
// to: the scope it gathers once (the VaultApp, in its defaulted view once
// the finalizer is set; the status it started from; its name in Vault; the
// server) and that server's Vault and Identity, which shadow the
// reconciler's (the environment's).
type pass struct {
	*VaultAppReconciler
	Vault    VaultAPI
	Identity Identity
	server   *Destination
	app      *vaultv1beta1.VaultApp
	before   *vaultv1beta1.VaultAppStatus
	// name is the policy's and role's name under this cluster's prefix
	// (the status may still name a former one).
	name string
}

// failure gives a Vault failure its reason and message. A Vault that did
// not answer is waited for: the VaultApp is reconciled as soon as its
// Vault answers again, whatever its backoff.
func (r *pass) failure(err error, reason string) (string, string) {
	if reason == vaultv1beta1.ReasonVaultError && vaultclient.PolicyRefused(err) {
		// Not a failed login, nor a token Vault no longer knows: the
		// operator's own policy refused it.
		return vaultv1beta1.ReasonOperatorForbidden, operatorForbidden(r.server.Spec, err)
	}
	if !vaultclient.Unavailable(err) {
		return reason, err.Error()
	}
	if r.Outage != nil {
		r.Outage.Hold(r.server.outageKey(), r.Vault.Healthy, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(r.app)})
	}
	if reason == vaultv1beta1.ReasonVaultError {
		reason = vaultv1beta1.ReasonVaultUnavailable
	}
	return reason, "Vault does not answer; retried as soon as it does: " + err.Error()
}

// Reconcile observes the VaultApp, its namespace's grants and Vault,
// compares them, and writes only what differs. What is live in Vault is
// always within the namespace's current grant.
//
// Whichever way the pass goes (in step, refused, no server, deleted), it
// returns a report, and the status is written once, here, with its Events
// after it; no report when the pass could not look or let the VaultApp go.
func (r *VaultAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	var app vaultv1beta1.VaultApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		r.refresh.Forget(req)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := app.Status.DeepCopy()
	var rep *report
	defer func() {
		if rep == nil {
			return
		}
		if serr := r.writeReport(ctx, &app, before, *rep); serr != nil {
			res, err = ctrl.Result{}, errors.Join(err, serr)
		}
	}()
	srv, err := r.resolve(ctx, &app)
	var noServer *errNoDestination
	switch {
	case errors.As(err, &noServer):
		res, rep, err = r.withoutServer(ctx, &app, noServer)
		return res, err
	case err != nil:
		return ctrl.Result{}, err
	}
	p := &pass{VaultAppReconciler: r, Vault: srv.Vault, Identity: srv.Identity, server: srv,
		app: &app, before: before, name: srv.Identity.policyName(app.Namespace, app.Name)}
	res, rep, err = p.reconcile(ctx, req)
	return res, err
}

// resolve finds the VaultApp's server: through Destinations, or the
// environment's Vault.
func (r *VaultAppReconciler) resolve(ctx context.Context, app *vaultv1beta1.VaultApp) (*Destination, error) {
	if r.Destinations != nil {
		return r.Destinations.Resolve(ctx, app)
	}
	if r.Vault == nil {
		return nil, &errNoDestination{vaultv1beta1.ReasonVaultNotConfigured, "the operator runs without a Vault address (--vault-address or VAULT_ADDR)"}
	}
	return &Destination{Vault: r.Vault, Identity: r.Identity}, nil
}

func (r *pass) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, *report, error) {
	if r.server.Unknown != "" {
		return r.onUnknownServer(ctx)
	}
	if !r.app.DeletionTimestamp.IsZero() {
		return r.finalize(ctx)
	}
	if err := finalizers.Set(ctx, r.Client, r.app, Finalizer, true); err != nil {
		return ctrl.Result{}, nil, err
	}
	// From here the pass reads the spec in its defaulted view, as the
	// webhook would have defaulted it (after the finalizer's patch, which
	// reads the object back as stored).
	r.app.SetDefaults(tenancy.DefaultTokenTTLOn(r.server.Spec, r.app.Namespace))
	// The status names what is live in Vault, and where: the former name
	// while a move to a new one (the cluster's prefix changed) is not
	// done; set after the finalizer's patch, which reads the object back.
	if r.before.PolicyName == "" {
		r.app.Status.PolicyName, r.app.Status.RoleName = r.name, r.name
	}
	r.app.Status.Server = r.server.Name
	r.app.Status.Vault = workloadAccess(r.server.Where, r.server.grantsNamespace(r.app.Namespace), r.app.Namespace, r.app.Status.RoleName)
	legacy := r.reportLegacyConfiguration()

	rep, err := r.bringInStep(ctx)
	if rep == nil {
		return ctrl.Result{}, nil, err
	}
	rep.legacy = legacy
	if err != nil || rep.waits {
		return ctrl.Result{}, rep, err
	}
	return r.refresh.After(req, tenancy.VaultRefreshInterval(r.app)), rep, nil
}

// bringInStep observes what the namespace is granted, brings Vault in step
// with it, and decides the report; no report when the pass could not look.
func (r *pass) bringInStep(ctx context.Context) (*report, error) {
	log := logf.FromContext(ctx)
	// The spec's own rules first (the webhook may have been bypassed).
	if errs := append(tenancy.ValidateVaultApp(r.app), crdschema.Validate(r.app)...); len(errs) > 0 {
		// Nothing is written to Vault, and what an earlier spec had live
		// is removed: a spec that cannot be checked grants nothing (it got
		// here past the webhook, or predates a rule).
		rep, err := r.refuse(ctx, errs.ToAggregate().Error())
		return &rep, err
	}
	var ns corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: r.app.Namespace}, &ns); err != nil {
		return nil, fmt.Errorf("read namespace %q: %w", r.app.Namespace, err)
	}
	// A server that no longer lists the namespace grants nothing: nothing
	// stays live there.
	decided, refused := tenancy.DecideVaultGrant(r.app, &ns, r.server.Spec)
	granted := grant{decided}

	changed, err := r.act(ctx, granted)
	var notOwned *errNotOwned
	switch {
	case errors.As(err, &notOwned):
		// No backoff retries: the owner of that object must act in Vault;
		// the next refresh looks again.
		reason := vaultv1beta1.ReasonNotOwned
		if notOwned.cluster != "" && !notOwned.released {
			reason = vaultv1beta1.ReasonHeldByAnotherCluster // asked for in the registration
		}
		rep := failed(reason, err.Error())
		rep.access = decideAccess(r.app, granted, refused)
		return &rep, nil
	case err != nil:
		log.Error(err, "sync with Vault failed", "policy", r.name)
		rep := failed(r.failure(err, vaultv1beta1.ReasonVaultError))
		rep.access = decideAccess(r.app, granted, refused)
		return &rep, err
	}
	rep := decideReport(r.app, r.before, r.name, granted, refused, changed)
	if rep.role.ok && r.contested() {
		rep.role.message += contestedNote(r.name)
	}
	if changed == roleTTLs && rep.reason == vaultv1beta1.ReasonUpdated {
		rep.note = contestMovedNote(r.name, r.contested()) // a Warning's note stays
	}
	r.app.Status.ObservedGeneration = r.app.Generation
	if id := r.app.PendingRefresh(); id != "" {
		r.app.Status.LastRefreshRequest = id // Vault was read for it in this pass
	}
	if changed != nothing || r.app.Status.LastSyncTime == nil {
		now := metav1.Now()
		r.app.Status.LastSyncTime = &now
	}
	if changed != nothing {
		log.Info("wrote to Vault", "what", changed.String(), "name", r.name, "reason", rep.reason)
	}
	return &rep, nil
}
