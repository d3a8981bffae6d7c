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
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
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
	Servers  Servers
	Recorder events.EventRecorder
	// MaxConcurrentReconciles is how many resources are reconciled at once.
	MaxConcurrentReconciles int
	// MaxBackoff caps the wait between two retries after a Keycloak failure.
	MaxBackoff time.Duration
	// Now is the clock (tests move it for rotation); time.Now when nil.
	Now func() time.Time
	// Outage holds the resources that wait for their Keycloak server to
	// answer again; SetupWithManager makes one when nil.
	Outage *outage.Tracker

	refresh shared.Refresh
	recent  recentSecrets
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

// Reconcile observes the resource, Keycloak and the target Secrets, and
// writes only the Secrets that differ.
func (r *KeycloakClientCredentialReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var kcc secretsv1beta1.KeycloakClientCredential
	if err := r.Get(ctx, req.NamespacedName, &kcc); err != nil {
		r.refresh.Forget(req)
		r.recent.forget(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := kcc.Status.DeepCopy()

	if !kcc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &kcc)
	}
	if err := shared.SetFinalizer(ctx, r.Client, &kcc, CredentialFinalizer, true); err != nil {
		return ctrl.Result{}, err
	}
	// From here the pass reads the spec in its defaulted view, as the
	// webhook would have defaulted it (after the finalizer's patch, which
	// reads the object back as stored).
	kcc.SetDefaults()

	// Observe the source: Keycloak's current secret (rotating it first when due).
	data, serves, srcErr := r.source(ctx, &kcc)
	if srcErr != nil {
		// The last good Secrets stay as they are.
		log.Info("client secret not available", "reason", srcErr.reason, "error", srcErr.err.Error())
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeSourceAvailable, false, srcErr.reason, srcErr.Error())
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeReady, false, srcErr.reason, srcErr.Error())
		r.warnOnChange(&kcc, before, srcErr.reason, srcErr.Error())
		if err := r.writeStatus(ctx, &kcc, before); err != nil {
			return ctrl.Result{}, err
		}
		if srcErr.retry {
			return ctrl.Result{}, srcErr.err
		}
		return r.refresh.After(req, tenancy.CredentialRefreshInterval(&kcc)), nil
	}
	shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeSourceAvailable, true, secretsv1beta1.ReasonSynced,
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
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeSecretsSynced, true, secretsv1beta1.ReasonSynced, msg)
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeReady, true, secretsv1beta1.ReasonSynced, msg)
		if kcc.Status.LastSyncTime == nil || !equality.Semantic.DeepEqual(before.Targets, kcc.Status.Targets) {
			now := metav1.NewTime(r.now())
			kcc.Status.LastSyncTime = &now
		}
	} else {
		reason := secretsv1beta1.ReasonPartiallySynced
		if len(failed) == len(results) {
			reason = results[0].Reason
		}
		msg := fmt.Sprintf("%d of %d target(s) not in step: %s", len(failed), len(results), joinShort(failed))
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeSecretsSynced, false, reason, msg)
		shared.SetCondition(&kcc.Status.Conditions, kcc.Generation, secretsv1beta1.TypeReady, false, reason, msg)
	}
	kcc.Status.ObservedGeneration = kcc.Generation
	if err := r.writeStatus(ctx, &kcc, before); err != nil {
		return ctrl.Result{}, err
	}
	if retry != nil {
		return ctrl.Result{}, retry
	}
	// A secret served from memory (a repair) keeps the refresh it was read
	// for; a secret just read serves until the refresh scheduled now.
	if serves > 0 {
		return r.refresh.After(req, max(time.Second, min(r.nextCheck(&kcc), serves))), nil
	}
	res := r.refresh.After(req, max(time.Second, r.nextCheck(&kcc)))
	r.recent.serveUntil(req.NamespacedName, r.now().Add(res.RequeueAfter))
	return res, nil
}

// warnOnChange records a Warning Event when the failure is new.
func (r *KeycloakClientCredentialReconciler) warnOnChange(kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus, reason, msg string) {
	if !equality.Semantic.DeepEqual(before.Conditions, kcc.Status.Conditions) {
		r.Recorder.Eventf(kcc, nil, corev1.EventTypeWarning, reason, "Sync", "%s", msg)
	}
}

// writeStatus writes the status only when it changed.
func (r *KeycloakClientCredentialReconciler) writeStatus(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, before *secretsv1beta1.KeycloakClientCredentialStatus) error {
	return shared.UpdateStatus(ctx, r.Client, kcc, before, &kcc.Status)
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
