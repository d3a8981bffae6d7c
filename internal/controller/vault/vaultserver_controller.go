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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/finalizers"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// ServerCheckInterval is how often a VaultServer's connection is checked.
const ServerCheckInterval = 5 * time.Minute

// VaultServerReconciler reports, for each VaultServer, whether the operator
// can work with that Vault (it answers, and the operator logs in), the
// version it runs, and the name this cluster's marks carry there.
type VaultServerReconciler struct {
	client.Client
	Clients  *ServerClients
	Recorder events.EventRecorder
	// ClusterUID is the kube-system namespace's UID: the cluster's name in
	// a server's marks when the server names none.
	ClusterUID string
	MaxBackoff time.Duration
	// CountInterval: DefaultCountInterval when zero.
	CountInterval time.Duration
	// Apps reads every namespace's VaultApps, for the count and the
	// cleanup; the Client (the manager's cache) when its Reader is nil.
	Apps EveryVaultApp

	// checked remembers each server's last successful check: a reconcile
	// that only recounts its VaultApps (a burst of them written) does not
	// ask Vault again before ServerCheckInterval.
	mu      sync.Mutex
	checked map[string]serverCheck
	// recheck holds the servers whose next pass checks in full: one of
	// this cluster's VaultApps on it turned HeldByAnotherCluster, or no
	// longer is, and the registration must say so now. Cleared when a
	// check starts, so a change during a check is checked again.
	recheck map[string]bool
	// tally counts each server's VaultApps from the cache's events, where
	// the cache holds every namespace (SetupWithManager).
	tally *serverTally
}

// serverCheck is a successful check of one generation of a server, and
// when its count of VaultApps was last written.
type serverCheck struct {
	generation int64
	at         time.Time
	countedAt  time.Time
}

// DefaultCountInterval is the least time between two writes of a server's
// count of VaultApps: a thousand VaultApps created at once cost a few
// status writes, not one each.
const DefaultCountInterval = 5 * time.Second

// Reconcile observes the server through its client, decides its
// conditions, and writes the status once.
func (r *VaultServerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var server vaultv1beta1.VaultServer
	if err := r.Get(ctx, req.NamespacedName, &server); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Clients.Forget(req.Name)
			r.noteCheck(&vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: req.Name}}, errServerDeleted)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !server.DeletionTimestamp.IsZero() {
		r.noteCheck(&server, errServerDeleted)
		return r.finalizeServer(ctx, &server)
	}
	if err := finalizers.Set(ctx, r.Client, &server, vaultv1beta1.ServerFinalizer, server.Spec.DeletionPolicy == vaultv1beta1.DeletionPolicyDelete); err != nil {
		return ctrl.Result{}, err
	}
	before := server.Status.DeepCopy()
	var res ctrl.Result
	var err error
	var events []serverEvent
	recounted := false
	if r.checkedLately(&server, before) {
		// Only the count changed: the last check stands.
		res, recounted, err = r.recount(ctx, &server)
		if wait, asked := r.recheckIn(server.Name); asked && err == nil && (res.RequeueAfter == 0 || wait < res.RequeueAfter) {
			res.RequeueAfter = wait
		}
	} else {
		res, events, err = r.checkNow(ctx, &server)
	}
	if serr := conditions.UpdateStatus(ctx, r.Client, &server, before, &server.Status); serr != nil {
		return ctrl.Result{}, errors.Join(err, serr)
	}
	// The check's Event follows its status: a failed write is followed by
	// a pass that reports the same again.
	for _, event := range events {
		r.Recorder.Eventf(&server, nil, event.eventType, event.reason, "Connect", "%s", event.message)
	}
	if recounted {
		r.noteCount(server.Name)
	}
	return res, err // an error is retried with capped backoff
}

// checkNow asks the server's Vault, counts its VaultApps and decides the
// status (the caller writes it) and the Event the check is worth (the
// caller records it once the status is written).
func (r *VaultServerReconciler) checkNow(ctx context.Context, server *vaultv1beta1.VaultServer) (ctrl.Result, []serverEvent, error) {
	r.mu.Lock()
	delete(r.recheck, server.Name)
	r.mu.Unlock()
	vc, info, err := r.connect(ctx, server)
	apps := server.Status.VaultApps
	var registration *registrationOutcome
	var listErr error // this cluster's VaultApps not read: not the server's fault
	switch {
	case err == nil:
		// One listing of this cluster's VaultApps: the count, and the
		// names they hold or ask for, which the registration needs.
		var mine *appsOnServer
		if mine, listErr = r.appsOn(ctx, server.Name); listErr != nil {
			break // Connected as found; registered at the retry
		}
		apps = mine.count
		var reg registrationOutcome
		if reg, err = r.register(ctx, server, vc, mine); err == nil {
			registration = &reg
		}
	case !r.everyVaultApp().Paged:
		// Read from the API server (a split cache), the count waits for a
		// check that succeeds: a Vault down would otherwise page through
		// every VaultApp at each retry.
		var err2 error
		if apps, err2 = r.vaultAppsOn(ctx, server.Name); err2 != nil {
			r.noteCheck(server, err)
			return ctrl.Result{}, nil, errors.Join(err, err2)
		}
	}
	r.noteCheck(server, errors.Join(err, listErr))
	var events []serverEvent
	issuer, _ := r.Clients.Bindings(server.Name)
	if server.Spec.AppAuth.JWT == nil {
		issuer = "" // a client built before the server left JWT
	}
	server.Status, events = decideServerStatus(server, serverCheckOutcome{clusterUID: r.ClusterUID, info: info, err: err, apps: apps, issuer: issuer, registration: registration})
	if err := errors.Join(err, listErr); err != nil {
		return ctrl.Result{}, events, err
	}
	return ctrl.Result{RequeueAfter: ServerCheckInterval}, events, nil
}

// checkedLately reports whether this generation of the server was checked
// successfully less than ServerCheckInterval ago, and its status says so.
func (r *VaultServerReconciler) checkedLately(server *vaultv1beta1.VaultServer, status *vaultv1beta1.VaultServerStatus) bool {
	r.mu.Lock()
	last, ok := r.checked[server.Name]
	again := r.recheck[server.Name]
	r.mu.Unlock()
	return ok && (!again || time.Since(last.at) < minRecheck) && last.generation == server.Generation && time.Since(last.at) < ServerCheckInterval &&
		status.ObservedGeneration == server.Generation && meta.IsStatusConditionTrue(status.Conditions, vaultv1beta1.TypeConnected)
}

func (r *VaultServerReconciler) noteCheck(server *vaultv1beta1.VaultServer, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checked == nil {
		r.checked = map[string]serverCheck{}
	}
	if err != nil {
		// The next pass checks in full anyway; a deleted server leaves
		// nothing behind.
		delete(r.checked, server.Name)
		delete(r.recheck, server.Name)
		return
	}
	now := time.Now()
	r.checked[server.Name] = serverCheck{generation: server.Generation, at: now, countedAt: now}
}

// recount counts the VaultApps on the server into its status (the caller
// writes it), and comes back when the next check is due. It reports
// whether it counted.
func (r *VaultServerReconciler) recount(ctx context.Context, server *vaultv1beta1.VaultServer) (ctrl.Result, bool, error) {
	r.mu.Lock()
	last := r.checked[server.Name]
	r.mu.Unlock()
	interval := r.CountInterval
	if interval == 0 {
		interval = DefaultCountInterval
	}
	if wait := interval - time.Since(last.countedAt); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, false, nil
	}
	apps, err := r.vaultAppsOn(ctx, server.Name)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	server.Status.VaultApps = apps
	return ctrl.Result{RequeueAfter: max(ServerCheckInterval-time.Since(last.at), time.Second)}, true, nil
}

// noteCount records that the server's count was written.
func (r *VaultServerReconciler) noteCount(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.checked[name]; ok {
		c.countedAt = time.Now()
		r.checked[name] = c
	}
}

// connect logs in to the server's Vault and asks how it is.
func (r *VaultServerReconciler) connect(ctx context.Context, server *vaultv1beta1.VaultServer) (ServerClient, vaultclient.ServerInfo, error) {
	vc, err := r.Clients.For(ctx, server)
	if err != nil {
		return nil, vaultclient.ServerInfo{}, err
	}
	info, err := vc.Check(ctx)
	return vc, info, err
}

// vaultAppsOn counts the VaultApps that wrote to the server.
func (r *VaultServerReconciler) vaultAppsOn(ctx context.Context, name string) (int32, error) {
	if n, ok := r.tally.Count(name); ok {
		return n, nil
	}
	mine, err := r.appsOn(ctx, name)
	if err != nil {
		return 0, err
	}
	return mine.count, nil
}

func (r *VaultServerReconciler) everyVaultApp() EveryVaultApp {
	if r.Apps.Reader == nil {
		return EveryVaultApp{Reader: r.Client}
	}
	return r.Apps
}

// errServerDeleted forgets a deleted server's last check.
var errServerDeleted = errors.New("VaultServer deleted")
