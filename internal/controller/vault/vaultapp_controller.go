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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
	"github.com/carbogame/vault-keycloak-operator/internal/schema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
)

// Finalizer keeps a VaultApp until its policy and role are removed from Vault.
const Finalizer = vaultv1beta1.CleanupFinalizer

// VaultAppReconciler keeps Vault in step with VaultApps.
type VaultAppReconciler struct {
	client.Client
	// Servers resolves each VaultApp to its Vault; when nil, every
	// VaultApp uses Vault and Identity below.
	Servers ServerSource
	// Vault is the Vault of the operator's environment, nil when it runs
	// without a Vault address.
	Vault    VaultAPI
	Recorder events.EventRecorder
	// Identity is this cluster's in the marks and names it writes to Vault.
	Identity Identity
	// MaxConcurrentReconciles is how many VaultApps are reconciled at once.
	MaxConcurrentReconciles int
	// MaxBackoff caps the wait between two retries after a Vault failure.
	MaxBackoff time.Duration
	// Outage holds the VaultApps that wait for Vault to answer again;
	// SetupWithManager makes one when nil.
	Outage *outage.Tracker

	refresh shared.Refresh
}

// pass is one reconcile of one VaultApp against the server it resolved
// to: its Vault and Identity shadow the reconciler's (the environment's).
type pass struct {
	*VaultAppReconciler
	Vault    VaultAPI
	Identity Identity
	server   *Server
}

// failure gives a Vault failure its reason and message. A Vault that did
// not answer is waited for: the VaultApp is reconciled as soon as its
// Vault answers again, whatever its backoff.
func (r *pass) failure(app *vaultv1beta1.VaultApp, err error, reason string) (string, string) {
	if !vaultclient.Unavailable(err) {
		return reason, err.Error()
	}
	if r.Outage != nil {
		r.Outage.Hold(r.server.outageKey(), r.Vault.Healthy, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
	}
	if reason == vaultv1beta1.ReasonVaultError {
		reason = vaultv1beta1.ReasonVaultUnavailable
	}
	return reason, "Vault does not answer; retried as soon as it does: " + err.Error()
}

// Reconcile observes the VaultApp, its namespace's grants and Vault,
// compares them, and writes only what differs. What is live in Vault is
// always within the namespace's current grant.
func (r *VaultAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app vaultv1beta1.VaultApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		r.refresh.Forget(req)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	srv, err := r.resolve(ctx, &app)
	var noServer *errServer
	switch {
	case errors.As(err, &noServer):
		return r.withoutServer(ctx, &app, noServer)
	case err != nil:
		return ctrl.Result{}, err
	}
	p := &pass{VaultAppReconciler: r, Vault: srv.Vault, Identity: srv.Identity, server: srv}
	return p.reconcile(ctx, req, &app)
}

// resolve finds the VaultApp's server: through Servers, or the
// environment's Vault.
func (r *VaultAppReconciler) resolve(ctx context.Context, app *vaultv1beta1.VaultApp) (*Server, error) {
	if r.Servers != nil {
		return r.Servers.Resolve(ctx, app)
	}
	if r.Vault == nil {
		return nil, &errServer{vaultv1beta1.ReasonVaultNotConfigured, "the operator runs without a Vault address (--vault-address or VAULT_ADDR)"}
	}
	return &Server{Vault: r.Vault, Identity: r.Identity}, nil
}

func (r *pass) reconcile(ctx context.Context, req ctrl.Request, app *vaultv1beta1.VaultApp) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	before := app.Status.DeepCopy()
	name := r.Identity.policyName(app.Namespace, app.Name)

	if !app.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, app, before, name)
	}
	if err := shared.SetFinalizer(ctx, r.Client, app, Finalizer, true); err != nil {
		return ctrl.Result{}, err
	}
	// From here the pass reads the spec in its defaulted view, as the
	// webhook would have defaulted it (after the finalizer's patch, which
	// reads the object back as stored).
	app.SetDefaults(0)
	// The status names what is live in Vault, and where: the former name
	// while a move to a new one (the cluster's prefix changed) is not
	// done; set after the finalizer's patch, which reads the object back.
	if before.PolicyName == "" {
		app.Status.PolicyName, app.Status.RoleName = name, name
	}
	app.Status.Server = r.server.Name
	r.reportLegacyConfiguration(app, before)

	// Observe: the spec's own rules (the webhook may have been bypassed),
	// then what the namespace may have.
	if errs := append(tenancy.ValidateVaultApp(app), schema.Validate(app)...); len(errs) > 0 {
		// Nothing is written to Vault, and what an earlier spec had live
		// is removed: a spec that cannot be checked grants nothing (it got
		// here past the webhook, or predates a rule).
		return r.refuse(ctx, app, before, name, errs.ToAggregate().Error())
	}
	var ns corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: app.Namespace}, &ns); err != nil {
		return ctrl.Result{}, fmt.Errorf("read namespace %q: %w", app.Namespace, err)
	}
	// A server that no longer lists the namespace grants nothing: nothing
	// stays live there.
	decided, refused := tenancy.DecideVaultGrant(app, &ns, r.server.Spec)
	granted := grant{decided}

	// Compare and act, then decide what to report.
	changed, err := r.act(ctx, app, before, name, granted)
	var notOwned *errNotOwned
	switch {
	case errors.As(err, &notOwned):
		// No backoff retries: the owner of that object must act in Vault;
		// the next refresh looks again.
		return r.report(ctx, req, app, before, failed(vaultv1beta1.ReasonNotOwned, err.Error()), nil)
	case err != nil:
		log.Error(err, "sync with Vault failed", "policy", name)
		return r.report(ctx, req, app, before, failed(r.failure(app, err, vaultv1beta1.ReasonVaultError)), err)
	}
	rep := decideReport(app, before, name, granted, refused, changed)
	app.Status.ObservedGeneration = app.Generation
	if changed != nothing || app.Status.LastSyncTime == nil {
		now := metav1.Now()
		app.Status.LastSyncTime = &now
	}
	if changed != nothing {
		log.Info("wrote to Vault", "what", changed.String(), "name", name, "reason", rep.reason)
	}
	return r.report(ctx, req, app, before, rep, nil)
}

// report applies a pass's report, writes the status once, and says when
// to come back: err (retried with backoff) when the pass failed on it,
// otherwise at the next refresh.
func (r *pass) report(ctx context.Context, req ctrl.Request, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, rep report, err error) (ctrl.Result, error) {
	rep.apply(app)
	if serr := r.updateStatus(ctx, app, before, rep.eventType, rep.reason, rep.note); serr != nil {
		return ctrl.Result{}, errors.Join(err, serr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.refresh.After(req, tenancy.VaultRefreshInterval(app)), nil
}

// act brings Vault in step with what is granted: the policy and role
// written, or removed when nothing is granted; and nothing left live under
// a former name, whatever holds the new one.
func (r *pass) act(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, name string, granted grant) (written, error) {
	var changed written
	var err error
	if granted.empty() {
		changed, err = r.revoke(ctx, app, before, name)
	} else {
		changed, err = r.sync(ctx, app, before, name, granted)
	}
	var notOwned *errNotOwned
	if err != nil && !errors.As(err, &notOwned) {
		return changed, err
	}
	if ferr := r.leaveFormerName(ctx, app, before.PolicyName, name); ferr != nil {
		return changed, ferr
	}
	if notOwned != nil && notOwned.cluster != "" {
		r.dropOwnRole(ctx, before, notOwned)
	}
	return changed, err
}

// refuse removes what the operator had live in Vault for a VaultApp it
// cannot act on, and says why.
func (r *pass) refuse(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, name, msg string) (ctrl.Result, error) {
	reason := vaultv1beta1.ReasonNotAllowed
	removed, err := r.removeOwned(ctx, app, before, name)
	var notOwned *errNotOwned
	if err == nil || errors.As(err, &notOwned) {
		err = r.leaveFormerName(ctx, app, before.PolicyName, name)
	}
	if err != nil {
		reason, msg := r.failure(app, err, vaultv1beta1.ReasonVaultError)
		r.failAll(app, reason, msg)
		return ctrl.Result{}, errors.Join(err, r.updateStatus(ctx, app, before, corev1.EventTypeWarning, reason, msg))
	}
	if removed {
		msg = fmt.Sprintf("removed policy and role %s from Vault: %s", name, msg)
		reason = vaultv1beta1.ReasonGrantRevoked
	}
	r.failAll(app, vaultv1beta1.ReasonNotAllowed, msg)
	return ctrl.Result{}, r.updateStatus(ctx, app, before, corev1.EventTypeWarning, reason, msg)
}

// written says what a sync wrote.
type written int

const (
	nothing written = iota
	policyOnly
	roleOnly
	policyAndRole
)

func (w written) String() string {
	return [...]string{"nothing", "wrote policy", "wrote role", "wrote policy and role"}[w]
}

// sync reads the policy and the role, and writes each that differs and is
// the operator's to write.
func (r *pass) sync(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, name string, granted grant) (written, error) {
	wantPolicy := r.Vault.RenderPolicy(r.ownerOf(app), granted.vaultRules())
	wantRole := vaultclient.Role{
		ServiceAccounts: app.Spec.KubernetesAuth.ServiceAccounts,
		Namespace:       app.Namespace,
		Policies:        []string{name},
		TTL:             granted.TokenTTL,
		MaxTTL:          granted.MaxTokenTTL,
	}

	have, err := r.observe(ctx, app, before, name)
	if err != nil {
		return nothing, err
	}
	// Both are judged the operator's (or absent) by now, so the two writes
	// go at once. Neither depends on the other: a role may name a policy
	// not written yet, and if one write fails the next reconcile finds the
	// other in step.
	var policyErr, roleErr error
	var w written
	var wg sync.WaitGroup
	if !have.policyFound || have.policy != wantPolicy {
		wg.Go(func() { policyErr = r.Vault.WritePolicy(ctx, name, wantPolicy) })
		w = policyOnly
	}
	if !have.roleFound || !have.role.Equal(wantRole) {
		roleErr = r.Vault.WriteRole(ctx, name, wantRole)
		w |= roleOnly
	}
	wg.Wait()
	if err := errors.Join(policyErr, roleErr); err != nil {
		return nothing, err
	}
	return w, nil
}

// vaultState is what Vault holds under a VaultApp's name.
type vaultState struct {
	policy      string
	policyFound bool
	role        vaultclient.Role
	roleFound   bool
}

// observe reads the policy and the role, and refuses (errNotOwned) when
// either exists and is not the operator's: nothing is written or removed
// unless both are. The policy is judged first, since a role is the
// operator's only by granting the operator's policy.
func (r *pass) observe(ctx context.Context, app *vaultv1beta1.VaultApp, status *vaultv1beta1.VaultAppStatus, name string) (vaultState, error) {
	var st vaultState
	// A VaultApp never synced, whose name a recent listing shows free, has
	// nothing to read (see vaultclient.Client.Free): a thousand VaultApps
	// created at once cost a few listings, not two reads each.
	if status.ObservedGeneration == 0 && r.Vault.Free(ctx, name) {
		return st, nil
	}
	// Both reads at once: one round trip of latency instead of two.
	var roleErr error
	roleRead := make(chan struct{})
	go func() {
		defer close(roleRead)
		st.role, st.roleFound, roleErr = r.Vault.ReadRole(ctx, name)
	}()
	var err error
	st.policy, st.policyFound, err = r.Vault.ReadPolicy(ctx, name)
	<-roleRead
	if err != nil {
		return st, err
	}
	if st.policyFound {
		if notOwned := ownsPolicy(r.Identity, app, status, name, st.policy); notOwned != nil {
			return st, notOwned
		}
	}
	if roleErr != nil {
		return st, roleErr
	}
	if st.roleFound {
		if notOwned := ownsRole(app, status, name, st.role); notOwned != nil {
			return st, notOwned
		}
	}
	return st, nil
}

// revoke removes the policy and role when the namespace may no longer use
// anything the VaultApp asks: a grant taken back shrinks what is live.
func (r *pass) revoke(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, name string) (written, error) {
	removed, err := r.removeOwned(ctx, app, before, name)
	if err != nil {
		return nothing, err
	}
	if removed {
		return policyAndRole, nil
	}
	return nothing, nil
}

// removeOwned deletes the role and then the policy, each only if it exists
// and is the operator's; it reports whether it deleted anything. An object
// that is not the operator's is an errNotOwned.
func (r *pass) removeOwned(ctx context.Context, app *vaultv1beta1.VaultApp, status *vaultv1beta1.VaultAppStatus, name string) (bool, error) {
	have, err := r.observe(ctx, app, status, name)
	if err != nil {
		return false, err
	}
	if have.roleFound {
		if err := r.Vault.DeleteRole(ctx, name); err != nil {
			return false, err
		}
	}
	if have.policyFound {
		if err := r.Vault.DeletePolicy(ctx, name); err != nil {
			return true, err
		}
	}
	return have.roleFound || have.policyFound, nil
}

// ownerOf is the owner the marks of the VaultApp's policy name.
func (r *pass) ownerOf(app *vaultv1beta1.VaultApp) vaultclient.Owner {
	return vaultclient.Owner{Namespace: app.Namespace, Name: app.Name, UID: string(app.UID), Cluster: r.Identity.Cluster}
}

// failAll sets every condition to False with the same reason.
func (r *VaultAppReconciler) failAll(app *vaultv1beta1.VaultApp, reason, msg string) {
	for _, t := range []string{vaultv1beta1.TypePolicySynced, vaultv1beta1.TypeRoleSynced, vaultv1beta1.TypeReady} {
		shared.SetCondition(&app.Status.Conditions, app.Generation, t, false, reason, msg)
	}
}

// updateStatus writes the status only when it changed, and records an Event
// for a change (not for a reconcile that found everything in step).
func (r *VaultAppReconciler) updateStatus(ctx context.Context, app *vaultv1beta1.VaultApp, before *vaultv1beta1.VaultAppStatus, eventType, reason, note string) error {
	if note != "" && (eventType == corev1.EventTypeNormal || !equality.Semantic.DeepEqual(before.Conditions, app.Status.Conditions)) {
		r.Recorder.Eventf(app, nil, eventType, reason, "Reconcile", "%s", note)
	}
	return shared.UpdateStatus(ctx, r.Client, app, before, &app.Status)
}

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
		For(&vaultv1beta1.VaultApp{}, builder.WithPredicates(shared.SpecChangedOrFinalizerMissing(Finalizer))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.vaultAppsIn), builder.WithPredicates(shared.NamespaceGrantsChanged))
	if r.Servers != nil {
		// A VaultServer created, changed or made the default: the
		// VaultApps that use it, or would.
		b = b.Watches(&vaultv1beta1.VaultServer{}, handler.EnqueueRequestsFromMapFunc(r.vaultAppsOf),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})))
	}
	return b.
		// VaultApps that waited for Vault, once it answers again.
		WatchesRawSource(r.Outage.Source()).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles),
			RateLimiter:             shared.RateLimiter(r.MaxBackoff),
		}).
		Named("vaultapp").
		Complete(r)
}

// vaultAppsOf maps a VaultServer to the VaultApps that name it, wrote to
// it, or have no server yet (it may have become the default).
func (r *VaultAppReconciler) vaultAppsOf(ctx context.Context, server client.Object) []reconcile.Request {
	var list vaultv1beta1.VaultAppList
	if err := r.List(ctx, &list); err != nil {
		logf.FromContext(ctx).Error(err, "list VaultApps of a VaultServer", "server", server.GetName())
		return nil
	}
	return shared.Requests(list.Items, func(a *vaultv1beta1.VaultApp) bool {
		named := a.Spec.ServerRef != nil && a.Spec.ServerRef.Name == server.GetName()
		return named || a.Status.Server == server.GetName() || (a.Spec.ServerRef == nil && !wroteAnywhere(a))
	})
}

func (r *VaultAppReconciler) vaultAppsIn(ctx context.Context, ns client.Object) []reconcile.Request {
	var list vaultv1beta1.VaultAppList
	if err := r.List(ctx, &list, client.InNamespace(ns.GetName())); err != nil {
		logf.FromContext(ctx).Error(err, "list VaultApps of a namespace", "namespace", ns.GetName())
		return nil
	}
	return shared.Requests[vaultv1beta1.VaultApp](list.Items, nil)
}
