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

// act is the pass's phases, in order: resolve the server and check the
// grants, rotate, read the client secret, distribute it to the targets,
// restart the workloads of a secret changed outside a rotation, release
// what is no longer targeted. A source it cannot read leaves every Secret
// as it was.
func (r *KeycloakClientCredentialReconciler) act(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) outcome {
	var out outcome
	var src sourced
	sc, serr := r.resolve(ctx, kcc, before)
	if serr == nil {
		out.rotationOutcome, serr = r.rotate(ctx, sc)
	}
	if serr == nil {
		src, serr = r.read(ctx, sc, out.fresh)
	}
	if serr != nil {
		logf.FromContext(ctx).Info("client secret not available", "reason", serr.reason, "error", serr.err.Error())
		out.source = serr
		return out
	}
	out.serves, out.refreshed = src.serves, src.refreshed
	dist := r.distribute(ctx, sc, src.data)
	out.targets, out.retry, out.notices = dist.targets, dist.retry, append(out.notices, dist.notices...)
	restarts, err := r.restartOnChange(ctx, sc, dist.changed, src.data)
	out.notices = append(out.notices, restarts...)
	out.retry = errors.Join(out.retry, err)
	if err := r.pruneUntargeted(ctx, sc); err != nil {
		out.retry = errors.Join(out.retry, err)
	}
	return out
}

func (r *KeycloakClientCredentialReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
