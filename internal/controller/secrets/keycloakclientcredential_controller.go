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

// Package secrets reconciles the secrets.carbogame.com group: KeycloakServers
// (can the operator log in?) and KeycloakClientCredentials (copy a client's
// secret into Secrets, and keep them in step).
package secrets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/schema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// CredentialFinalizer keeps a KeycloakClientCredential until the Secrets it
// wrote are removed (or, with Retain, released).
const CredentialFinalizer = "secrets.carbogame.com/cleanup"

// KeycloakClientCredentialReconciler copies Keycloak client secrets into Secrets.
type KeycloakClientCredentialReconciler struct {
	client.Client
	// Reader reads what the cache does not hold: Secrets the operator does
	// not own (to find a foreign Secret in the way).
	Reader   client.Reader
	Servers  Servers
	Recorder events.EventRecorder
	// MaxConcurrentReconciles is how many resources are reconciled at once.
	MaxConcurrentReconciles int
	// MaxBackoff caps the wait between two retries after a Keycloak failure.
	MaxBackoff time.Duration
	// Now is the clock (tests move it for rotation); time.Now when nil.
	Now func() time.Time
}

// sourceError is a failure to obtain the client secret, with its reason.
type sourceError struct {
	reason string
	err    error
	// retry: retried with backoff; otherwise the resource waits for a
	// change of what the operator watches (itself, its server).
	retry bool
}

func (e *sourceError) Error() string { return e.err.Error() }

// Reconcile observes the resource, Keycloak and the target Secrets, and
// writes only the Secrets that differ.
func (r *KeycloakClientCredentialReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var kcc secretsv1beta1.KeycloakClientCredential
	if err := r.Get(ctx, req.NamespacedName, &kcc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := kcc.Status.DeepCopy()

	if !kcc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &kcc)
	}
	if err := shared.SetFinalizer(ctx, r.Client, &kcc, CredentialFinalizer, true); err != nil {
		return ctrl.Result{}, err
	}

	// Observe the source: Keycloak's current secret (rotating it first when due).
	data, srcErr := r.source(ctx, &kcc)
	if srcErr != nil {
		// The last good Secrets stay as they are.
		log.Info("client secret not available", "reason", srcErr.reason, "error", srcErr.err.Error())
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeSourceAvailable, false, srcErr.reason, srcErr.Error())
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeReady, false, srcErr.reason, srcErr.Error())
		r.warnOnChange(&kcc, before, srcErr.reason, srcErr.Error())
		if err := r.writeStatus(ctx, &kcc, before); err != nil {
			return ctrl.Result{}, err
		}
		if srcErr.retry {
			return ctrl.Result{}, srcErr.err
		}
		return ctrl.Result{RequeueAfter: tenancy.CredentialRefreshInterval(&kcc)}, nil
	}
	shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeSourceAvailable, true, shared.ReasonSynced,
		fmt.Sprintf("read the secret of client %q in realm %q", kcc.Spec.Source.ClientID, kcc.Spec.Source.Realm))

	// Compare and act, target by target.
	results := make([]secretsv1beta1.TargetStatus, 0, len(tenancy.TargetNamespaces(&kcc)))
	var failed []string
	var retry error
	for _, ns := range tenancy.TargetNamespaces(&kcc) {
		res, err := r.syncTarget(ctx, &kcc, ns, data, before)
		results = append(results, res)
		if !res.Synced {
			failed = append(failed, ns+": "+res.Message)
		}
		if err != nil {
			retry = errors.Join(retry, err)
		}
	}
	if err := r.pruneUntargeted(ctx, &kcc, before); err != nil {
		retry = errors.Join(retry, err)
	}
	kcc.Status.Targets = results

	if len(failed) == 0 {
		msg := fmt.Sprintf("Secret %s is in step in %d namespace(s)", kcc.Spec.Target.SecretName, len(results))
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeSecretsSynced, true, shared.ReasonSynced, msg)
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeReady, true, shared.ReasonSynced, msg)
		if kcc.Status.LastSyncTime == nil || !equality.Semantic.DeepEqual(before.Targets, kcc.Status.Targets) {
			now := metav1.NewTime(r.now())
			kcc.Status.LastSyncTime = &now
		}
	} else {
		reason := shared.ReasonPartiallySynced
		if len(failed) == len(results) {
			reason = results[0].Reason
		}
		msg := fmt.Sprintf("%d of %d target(s) not in step: %s", len(failed), len(results), joinShort(failed))
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeSecretsSynced, false, reason, msg)
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, shared.TypeReady, false, reason, msg)
	}
	kcc.Status.ObservedGeneration = kcc.Generation
	if err := r.writeStatus(ctx, &kcc, before); err != nil {
		return ctrl.Result{}, err
	}
	if retry != nil {
		return ctrl.Result{}, retry
	}
	return ctrl.Result{RequeueAfter: r.nextCheck(&kcc)}, nil
}

// source returns the Secret data of the client, from Keycloak.
func (r *KeycloakClientCredentialReconciler) source(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (map[string][]byte, *sourceError) {
	src := kcc.Spec.Source
	// A spec the webhook would refuse (it was down, or the object predates
	// a rule) is not acted on.
	if errs := append(tenancy.ValidateKeycloakClientCredential(kcc), schema.Validate(kcc)...); len(errs) > 0 {
		return nil, &sourceError{reason: shared.ReasonNotAllowed, err: errs.ToAggregate()}
	}
	var server secretsv1beta1.KeycloakServer
	if err := r.Get(ctx, client.ObjectKey{Name: src.ServerRef.Name}, &server); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &sourceError{reason: shared.ReasonServerNotFound, err: fmt.Errorf("KeycloakServer %q does not exist", src.ServerRef.Name)}
		}
		return nil, &sourceError{reason: shared.ReasonKeycloakError, err: err, retry: true}
	}
	// The admin's grants, checked before anything is read for the
	// resource, and again with the login client the server really uses.
	req := tenancy.AccessRequestOf(kcc)
	if errs := tenancy.CheckKeycloakAccess(&server, req, tenancy.LoginOf(&server, "")); len(errs) > 0 {
		return nil, notGranted(errs)
	}
	kc, err := r.Servers.Server(ctx, &server)
	if err != nil {
		return nil, classify(err)
	}
	if errs := tenancy.CheckKeycloakAccess(&server, req, tenancy.LoginOf(&server, kc.LoginClientID())); len(errs) > 0 {
		return nil, notGranted(errs)
	}
	if err := r.rotateIfDue(ctx, kcc, kc); err != nil {
		return nil, classify(err)
	}
	cred, err := kc.ClientSecret(ctx, src.Realm, src.ClientID)
	if err != nil {
		return nil, classify(err)
	}
	return desiredData(kcc, cred.ClientID, cred.Secret, kc.IssuerURL(src.Realm), kc.TokenURL(src.Realm)), nil
}

// notGranted is a request outside the server's grants. It is not retried:
// a change of the resource or of its server (both watched) brings the next
// attempt. The Secrets already written stay as they are.
func notGranted(errs field.ErrorList) *sourceError {
	reason := shared.ReasonAccessNotGranted
	if errs[0].Field == "spec.source.serverRef.name" {
		reason = shared.ReasonServerNotAllowed
	}
	return &sourceError{reason: reason, err: errs.ToAggregate()}
}

// classify gives a Keycloak failure its reason. Every one of them is
// retried with capped backoff: each is mended outside what the operator
// watches (in Keycloak, or in the credentials Secret, which is not cached),
// so no event would announce the fix.
func classify(err error) *sourceError {
	reason := shared.ReasonKeycloakError
	switch {
	case errors.Is(err, errCredentials):
		reason = shared.ReasonCredentialsInvalid
	case errors.Is(err, keycloak.ErrUnauthorized):
		reason = shared.ReasonUnauthorized
	case errors.Is(err, keycloak.ErrClientNotFound):
		reason = shared.ReasonClientNotFound
	case errors.Is(err, keycloak.ErrNoUsableSecret):
		reason = shared.ReasonNoUsableSecret
	}
	return &sourceError{reason: reason, err: err, retry: true}
}

// rotateIfDue regenerates the client secret in Keycloak when the rotation
// interval has passed since the last rotation (or since creation).
func (r *KeycloakClientCredentialReconciler) rotateIfDue(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI) error {
	due, ok := rotationDue(kcc)
	if !ok || r.now().Before(due) {
		return nil
	}
	if err := kc.RegenerateSecret(ctx, kcc.Spec.Source.Realm, kcc.Spec.Source.ClientID); err != nil {
		return err
	}
	// Recorded at once, by a patch that no concurrent write can refuse: a
	// status update that later fails on a conflict must not leave the
	// rotation looking due, or the next pass would regenerate again.
	unrotated := kcc.DeepCopy()
	now := metav1.NewTime(r.now())
	kcc.Status.LastRotationTime = &now
	if err := r.Status().Patch(ctx, kcc, client.MergeFrom(unrotated)); err != nil {
		return fmt.Errorf("record the rotation of client %q: %w", kcc.Spec.Source.ClientID, err)
	}
	r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, shared.ReasonRotated, "Rotate",
		"regenerated the secret of client %q in Keycloak", kcc.Spec.Source.ClientID)
	return nil
}

func rotationDue(kcc *secretsv1beta1.KeycloakClientCredential) (time.Time, bool) {
	if kcc.Spec.Rotation == nil || kcc.Spec.Rotation.Interval.Duration <= 0 {
		return time.Time{}, false
	}
	last := kcc.CreationTimestamp.Time
	if kcc.Status.LastRotationTime != nil {
		last = kcc.Status.LastRotationTime.Time
	}
	return last.Add(kcc.Spec.Rotation.Interval.Duration), true
}

// syncTarget brings one target Secret in step. The error is for a failure
// worth retrying; a refusal (no consent, foreign Secret) is only reported.
func (r *KeycloakClientCredentialReconciler) syncTarget(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string, data map[string][]byte, before *secretsv1beta1.KeycloakClientCredentialStatus) (secretsv1beta1.TargetStatus, error) {
	res := secretsv1beta1.TargetStatus{Namespace: ns}
	fail := func(reason, msg string, err error) (secretsv1beta1.TargetStatus, error) {
		res.Reason, res.Message = reason, msg
		if !slices.ContainsFunc(before.Targets, func(t secretsv1beta1.TargetStatus) bool { return t == res }) {
			r.Recorder.Eventf(kcc, nil, corev1.EventTypeWarning, reason, "Sync", "namespace %s: %s", ns, msg)
		}
		return res, err
	}
	name := kcc.Spec.Target.SecretName

	var namespace corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		return fail(shared.ReasonTargetFailed, "read namespace: "+err.Error(), client.IgnoreNotFound(err))
	}
	if !tenancy.ConsentsTo(&namespace, kcc.Namespace) {
		return fail(shared.ReasonTargetNotAllowed, fmt.Sprintf("namespace %s does not consent: its %s annotation does not list %q",
			ns, tenancy.AllowedSourceNamespacesAnnotation, kcc.Namespace), nil)
	}
	if msg := tenancy.SecretTypeRefusal(&namespace, kcc.Spec.Target.Type); msg != "" {
		return fail(shared.ReasonTargetNotAllowed, msg, nil)
	}

	var current corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &current)
	switch {
	case apierrors.IsNotFound(err):
		// Not in the cache: it may still exist, unmanaged. Ask the API server.
		var foreign corev1.Secret
		if ferr := r.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &foreign); ferr == nil {
			return fail(shared.ReasonSecretNotOwned, fmt.Sprintf("Secret %s/%s exists and was not written for this resource: left untouched", ns, name), nil)
		} else if !apierrors.IsNotFound(ferr) {
			return fail(shared.ReasonTargetFailed, ferr.Error(), ferr)
		}
		if err := r.Create(ctx, newTargetSecret(kcc, ns, data)); err != nil {
			return fail(shared.ReasonTargetFailed, "create Secret: "+err.Error(), err)
		}
		reason, verb := shared.ReasonCreated, "created"
		if wasSynced(before, ns) {
			reason, verb = shared.ReasonDriftRepaired, "re-created deleted"
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, reason, "Sync", "%s Secret %s/%s", verb, ns, name)
	case err != nil:
		return fail(shared.ReasonTargetFailed, err.Error(), err)
	case !isOwnedBy(&current, kcc):
		return fail(shared.ReasonSecretNotOwned, fmt.Sprintf("Secret %s/%s is managed for another resource: left untouched", ns, name), nil)
	default:
		wasEdited := edited(&current)
		if applyDesired(&current, kcc, data) {
			// Updated in place: tools such as Reloader watch updates.
			if err := r.Update(ctx, &current); err != nil {
				return fail(shared.ReasonTargetFailed, "update Secret: "+err.Error(), err)
			}
			reason, msg := shared.ReasonUpdated, "updated Secret %s/%s"
			if wasEdited {
				reason, msg = shared.ReasonDriftRepaired, "restored edited Secret %s/%s"
			}
			r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, reason, "Sync", msg, ns, name)
		}
	}
	res.Synced, res.Reason = true, shared.ReasonSynced
	return res, nil
}

func wasSynced(status *secretsv1beta1.KeycloakClientCredentialStatus, ns string) bool {
	return slices.ContainsFunc(status.Targets, func(t secretsv1beta1.TargetStatus) bool { return t.Namespace == ns && t.Synced })
}

// pruneUntargeted removes the Secrets this resource wrote in namespaces it
// no longer targets (or under a name it no longer uses).
func (r *KeycloakClientCredentialReconciler) pruneUntargeted(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) error {
	written, err := r.writtenSecrets(ctx, kcc, before)
	if err != nil {
		return err
	}
	targets := tenancy.TargetNamespaces(kcc)
	var errs error
	for _, s := range written {
		if slices.Contains(targets, s.Namespace) && s.Name == kcc.Spec.Target.SecretName {
			continue
		}
		if err := r.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			errs = errors.Join(errs, fmt.Errorf("delete Secret %s/%s no longer targeted: %w", s.Namespace, s.Name, err))
			continue
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, shared.ReasonDeleted, "Prune", "deleted Secret %s/%s, no longer a target", s.Namespace, s.Name)
	}
	return errs
}

// writtenSecrets are the Secrets the operator wrote for kcc: they carry its
// ownership labels and lie in a namespace it targets or targeted (its
// status lists those). Labels alone prove nothing — anyone who may create a
// Secret can copy them — so a labelled Secret in a namespace the resource
// never wrote to is left alone.
func (r *KeycloakClientCredentialReconciler) writtenSecrets(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, status *secretsv1beta1.KeycloakClientCredentialStatus) ([]*corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.List(ctx, &list, client.MatchingLabels(ownedBy(kcc))); err != nil {
		return nil, fmt.Errorf("list owned Secrets: %w", err)
	}
	namespaces := slices.Clone(tenancy.TargetNamespaces(kcc))
	for _, t := range status.Targets {
		namespaces = append(namespaces, t.Namespace)
	}
	var out []*corev1.Secret
	for i := range list.Items {
		if slices.Contains(namespaces, list.Items[i].Namespace) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// finalize removes the Secrets written for the resource (Delete), or leaves
// them (Retain). Keycloak is not needed for either.
func (r *KeycloakClientCredentialReconciler) finalize(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) error {
	if !controllerutil.ContainsFinalizer(kcc, CredentialFinalizer) {
		return nil
	}
	if kcc.Spec.DeletionPolicy != secretsv1beta1.DeletionPolicyRetain {
		written, err := r.writtenSecrets(ctx, kcc, &kcc.Status)
		if err != nil {
			return err
		}
		for _, s := range written {
			if err := r.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete Secret %s/%s: %w", s.Namespace, s.Name, err)
			}
		}
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, shared.ReasonDeleted, "Delete", "deleted %d Secret(s)", len(written))
	} else {
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeNormal, shared.ReasonRetained, "Delete", "left the Secrets in place (deletionPolicy Retain)")
	}
	if err := shared.SetFinalizer(ctx, r.Client, kcc, CredentialFinalizer, false); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// warnOnChange records a Warning Event when the failure is new.
func (r *KeycloakClientCredentialReconciler) warnOnChange(kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus, reason, msg string) {
	if !equality.Semantic.DeepEqual(before.Conditions, kcc.Status.Conditions) {
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeWarning, reason, "Sync", "%s", msg)
	}
}

// writeStatus writes the status only when it changed.
func (r *KeycloakClientCredentialReconciler) writeStatus(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) error {
	if equality.Semantic.DeepEqual(*before, kcc.Status) {
		return nil
	}
	if err := r.Status().Update(ctx, kcc); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

func (r *KeycloakClientCredentialReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// nextCheck is the refresh interval, or sooner when a rotation is due.
func (r *KeycloakClientCredentialReconciler) nextCheck(kcc *secretsv1beta1.KeycloakClientCredential) time.Duration {
	next := tenancy.CredentialRefreshInterval(kcc)
	if due, ok := rotationDue(kcc); ok {
		next = min(next, max(time.Second, due.Sub(r.now())))
	}
	return next
}

func joinShort(items []string) string {
	const limit = 3
	if len(items) > limit {
		return fmt.Sprintf("%s; and %d more", strings.Join(items[:limit], "; "), len(items)-limit)
	}
	return strings.Join(items, "; ")
}

// Index of KeycloakClientCredentials by the KeycloakServer they read from.
const serverRefIndex = "spec.source.serverRef.name"

// SetupWithManager watches the resources, the Secrets they own (through the
// label-filtered cache: a deleted or edited Secret is repaired at once), their
// KeycloakServers, and Namespaces (consent).
func (r *KeycloakClientCredentialReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &secretsv1beta1.KeycloakClientCredential{}, serverRefIndex,
		func(o client.Object) []string {
			return []string{o.(*secretsv1beta1.KeycloakClientCredential).Spec.Source.ServerRef.Name}
		}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&secretsv1beta1.KeycloakClientCredential{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.ownerOfSecret)).
		Watches(&secretsv1beta1.KeycloakServer{}, handler.EnqueueRequestsFromMapFunc(r.usersOfServer)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.targetingNamespace)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles),
			RateLimiter:             shared.RateLimiter(r.MaxBackoff),
		}).
		Named("keycloakclientcredential").
		Complete(r)
}

// ownerOfSecret queues the KeycloakClientCredential a Secret's labels name,
// only if that resource really targets this Secret: anyone who may create
// Secrets can forge the labels, and must not make the operator reconcile
// another tenant's resources.
func (r *KeycloakClientCredentialReconciler) ownerOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	key := client.ObjectKey{Namespace: o.GetLabels()[OwnerNamespaceLabel], Name: o.GetLabels()[OwnerNameLabel]}
	if key.Namespace == "" || key.Name == "" {
		return nil
	}
	var owner secretsv1beta1.KeycloakClientCredential
	if err := r.Get(ctx, key, &owner); err != nil {
		return nil // gone (its finalizer cleaned up) or never existed
	}
	if owner.Spec.Target.SecretName != o.GetName() || !slices.Contains(tenancy.TargetNamespaces(&owner), o.GetNamespace()) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

func (r *KeycloakClientCredentialReconciler) usersOfServer(ctx context.Context, o client.Object) []reconcile.Request {
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list, client.MatchingFields{serverRefIndex: o.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "list users of a KeycloakServer", "server", o.GetName())
		return nil
	}
	return requests(list.Items, func(*secretsv1beta1.KeycloakClientCredential) bool { return true })
}

func (r *KeycloakClientCredentialReconciler) targetingNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list); err != nil {
		logf.FromContext(ctx).Error(err, "list KeycloakClientCredentials")
		return nil
	}
	return requests(list.Items, func(k *secretsv1beta1.KeycloakClientCredential) bool {
		return slices.Contains(tenancy.TargetNamespaces(k), o.GetName())
	})
}

func requests(items []secretsv1beta1.KeycloakClientCredential, keep func(*secretsv1beta1.KeycloakClientCredential) bool) []reconcile.Request {
	var out []reconcile.Request
	for i := range items {
		if keep(&items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&items[i])})
		}
	}
	return out
}
