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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/requeue"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// CredentialFinalizer keeps a KeycloakClientCredential until the Secrets it
// wrote are removed (or, with Retain, released).
const CredentialFinalizer = secretsv1beta1.CleanupFinalizer

// KeycloakClientCredentialReconciler copies Keycloak client secrets into Secrets.
type KeycloakClientCredentialReconciler struct {
	client.Client
	// Reader reads what the cache does not hold: Secrets the operator does
	// not own (to find a foreign Secret in the way).
	Reader   client.Reader
	Clients  Clients
	Recorder events.EventRecorder
	// MaxConcurrentReconciles is how many resources are reconciled at once.
	MaxConcurrentReconciles int
	// Shard is the part of the namespaces whose credentials this replica
	// reconciles (the zero value: all).
	Shard shard.Shard
	// Rotations claims a client for its rotation across shards, and tells
	// the other shards' readers of a client that its secret was
	// regenerated; nil for one replica (it checks its cache, and wakes its
	// own readers, in memory).
	Rotations *RotationSignal
	// Gate holds reconciles back while leaders of another shard count
	// lead (a rollout from one count to another); nil is open.
	Gate *shard.Gate
	// MaxBackoff caps the wait between two retries after a Keycloak failure.
	MaxBackoff time.Duration
	// Now is the clock (tests move it for rotation); time.Now when nil.
	Now func() time.Time
	// Outage holds the resources that wait for their Keycloak server to
	// answer again; SetupWithManager makes one when nil.
	Outage *outage.Tracker
	// RegenerationsEvery is how often each realm's admin events are read
	// for secrets regenerated outside this process; 0 reads none.
	RegenerationsEvery time.Duration

	refresh requeue.Refresh
	recent  recentSecrets
	// readers queues the other readers of a client just rotated.
	readers *readersOfRotated
	// created holds the UIDs of the Secrets this process created, by the
	// UID of the resource they were created for, until a status that
	// records them is read back: the Secret's own watch event often comes
	// before the status write reaches the cache, and must not find its
	// Secret "not the operator's".
	created sync.Map // types.UID (Secret) → types.UID (resource)
	// echoes are the Secrets this process just wrote, whose own watch
	// events need no pass.
	echoes ownWrites
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

// Reconcile reads the resource in its defaulted view, acts (Keycloak, the
// target Secrets: only what differs), decides what to report, and writes
// the status once.
func (r *KeycloakClientCredentialReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var kcc secretsv1beta1.KeycloakClientCredential
	// Waits for this process's own writes (manager.ClientOptions): a
	// rotation's step recorded by the last pass is read here, never missed.
	if err := r.Get(ctx, req.NamespacedName, &kcc); err != nil {
		r.refresh.Forget(req)
		r.recent.forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !kcc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &kcc)
	}
	if err := finalizers.Set(ctx, r.Client, &kcc, CredentialFinalizer, true); err != nil {
		return ctrl.Result{}, err
	}
	// From here the pass reads the spec in its defaulted view, as the
	// webhook would have defaulted it (after the finalizer's patch, which
	// reads the object back as stored).
	kcc.SetDefaults()
	before := kcc.Status.DeepCopy()

	out := r.act(ctx, &kcc, before)
	status, notices := decideStatus(&kcc, before, out, r.now())
	kcc.Status = status
	// Events follow the status they report: a write that failed (a
	// conflict) is followed by a pass that reports the same again, so only
	// what this pass did in Keycloak is recorded then.
	err := conditions.UpdateStatus(ctx, r.Client, &kcc, before, &kcc.Status)
	for _, n := range notices {
		if err == nil || n.changedKeycloak() {
			r.Recorder.Eventf(&kcc, nil, n.eventType, n.reason, "Sync", "%s", n.message)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.next(req, &kcc, out)
}

// act reads the client secret and brings every target Secret in step,
// writing only what differs; a source it cannot read leaves every Secret
// as it was.
func (r *KeycloakClientCredentialReconciler) act(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) outcome {
	src, srcErr := r.source(ctx, kcc)
	if srcErr != nil {
		logf.FromContext(ctx).Info("client secret not available", "reason", srcErr.reason, "error", srcErr.err.Error())
		return outcome{source: srcErr, rotationRefused: src.rotationRefused, graceRefused: src.graceRefused, rotationWaits: src.rotationWaits, notices: src.notices}
	}
	out := outcome{serves: src.serves, refreshed: src.refreshed, rotationRefused: src.rotationRefused, graceRefused: src.graceRefused, rotationWaits: src.rotationWaits, notices: src.notices,
		targets: make([]secretsv1beta1.TargetStatus, 0, len(tenancy.TargetNamespaces(kcc)))}
	var changed []string
	for _, ns := range tenancy.TargetNamespaces(kcc) {
		res, warnings, secretChanged, err := r.syncTarget(ctx, kcc, ns, src.data, before)
		if secretChanged {
			changed = append(changed, ns)
		}
		out.targets = append(out.targets, res)
		out.retry = errors.Join(out.retry, err)
		out.notices = append(out.notices, warnings...)
	}
	restarts, err := r.restartOnChange(ctx, kcc, changed, src.data)
	out.notices = append(out.notices, restarts...)
	out.retry = errors.Join(out.retry, err)
	if err := r.pruneUntargeted(ctx, kcc, before); err != nil {
		out.retry = errors.Join(out.retry, err)
	}
	return out
}

// next is when the resource is looked at again: at once with backoff after
// a failure worth retrying, else at its refresh. A secret served from
// memory (a repair) keeps the refresh it was read for; a secret just read
// serves until the refresh scheduled now.
func (r *KeycloakClientCredentialReconciler) next(req ctrl.Request, kcc *secretsv1beta1.KeycloakClientCredential, out outcome) (ctrl.Result, error) {
	switch {
	case out.source != nil && out.source.retry:
		return ctrl.Result{}, out.source.err
	case out.source != nil:
		return r.refresh.After(req, tenancy.CredentialRefreshInterval(kcc)), nil
	case out.retry != nil:
		return ctrl.Result{}, out.retry
	case out.serves > 0:
		return r.refresh.After(req, max(time.Second, min(r.nextCheck(kcc), r.consumersPoll(kcc), out.serves))), nil
	}
	check := max(time.Second, r.nextCheck(kcc))
	if poll := r.consumersPoll(kcc); poll < check {
		// The secret just read serves until the check, not the poll: a
		// rollout followed every few seconds costs Keycloak nothing.
		r.recent.serveUntil(req.NamespacedName, r.now().Add(check))
		return r.refresh.After(req, poll), nil
	}
	res := r.refresh.After(req, check)
	r.recent.serveUntil(req.NamespacedName, r.now().Add(res.RequeueAfter))
	return res, nil
}

// consumersPoll is how soon the rotation's consumers need a look: every
// consumerPoll while they are to be restarted or followed; never else.
func (r *KeycloakClientCredentialReconciler) consumersPoll(kcc *secretsv1beta1.KeycloakClientCredential) time.Duration {
	rot := kcc.Status.Rotation
	never := time.Duration(1<<63 - 1)
	switch {
	case rot == nil || consumersOf(kcc) == nil:
		return never
	case rot.Phase == secretsv1beta1.RotationGracePeriod && consumersPending(kcc, rot, r.now()):
		return consumerPoll
	case rot.Phase == secretsv1beta1.RotationCompleted && !rot.WithGrace && rot.ConsumersDeadline == nil &&
		rot.CompletedTime != nil && r.now().Sub(rot.CompletedTime.Time) < noGraceRestartWindow:
		return consumerPoll
	}
	return never
}

func (r *KeycloakClientCredentialReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// nextCheck is the refresh interval, or sooner when a rotation is due (or
// a rotation request waits for the gap after the last one, or a grace
// period ends). While a rotation is under way, a due one or a request
// waits for it; a rotation refused for want of a grace period is tried
// again at the refresh, and one waiting for another resource's in 30 s.
func (r *KeycloakClientCredentialReconciler) nextCheck(kcc *secretsv1beta1.KeycloakClientCredential) time.Duration {
	next := tenancy.CredentialRefreshInterval(kcc)
	soon := func(at time.Time) { next = min(next, max(time.Second, at.Sub(r.now()))) }
	if rot := inProgress(kcc); rot != nil {
		if rot.Phase == secretsv1beta1.RotationGracePeriod && rot.GraceEndsTime != nil {
			soon(rot.GraceEndsTime.Time)
		}
		return next
	}
	ready := meta.FindStatusCondition(kcc.Status.Conditions, secretsv1beta1.TypeRotationReady)
	switch {
	case ready != nil && ready.Reason == secretsv1beta1.ReasonGraceUnavailable:
	case ready != nil && ready.Reason == secretsv1beta1.ReasonRotationWaiting:
		next = min(next, 30*time.Second)
	default:
		if due, ok := kcc.RotationDueAt(); ok {
			soon(due)
		}
		if kcc.PendingRotation() != "" {
			soon(kcc.RotationRequestAllowedAt())
		}
	}
	return next
}
