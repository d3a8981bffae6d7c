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

package secrets

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/requeue"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/watches"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// ServerCheckInterval is how often a KeycloakServer's connection is checked.
const ServerCheckInterval = 5 * time.Minute

// KeycloakServerReconciler reports whether the operator can log in to each
// KeycloakServer, and the version it runs.
type KeycloakServerReconciler struct {
	client.Client
	Clients    Clients
	Recorder   events.EventRecorder
	MaxBackoff time.Duration
	// Credentials, when set, is a metadata-only cache of the Secrets in the
	// operator's namespace: an admin who rotates or fixes a credentials
	// Secret sees the KeycloakServers that name it checked at once, not at
	// the next check. (The manager's own cache holds only the Secrets the
	// operator writes.)
	Credentials cache.Cache
}

// Reconcile logs in (through the pooled, cached token) and reads the
// server's version.
func (r *KeycloakServerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var server secretsv1beta1.KeycloakServer
	if err := r.Get(ctx, req.NamespacedName, &server); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Clients.Forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := server.Status.DeepCopy()

	// The Events of the check, recorded once its status is written: a
	// failed write is followed by a pass that reports the same again.
	var notices []serverNotice
	version, err := r.version(ctx, &server)
	if err != nil {
		src := classify(err, server.Name)
		conditions.Set(&server.Status.Conditions, server.Generation, secretsv1beta1.TypeConnected, false, src.reason, err.Error())
		if !equality.Semantic.DeepEqual(before.Conditions, server.Status.Conditions) {
			notices = append(notices, serverNotice{corev1.EventTypeWarning, src.reason, "Connect", err.Error()})
		}
	} else {
		server.Status.Version = version
		conditions.Set(&server.Status.Conditions, server.Generation, secretsv1beta1.TypeConnected, true, secretsv1beta1.ReasonConnected,
			fmt.Sprintf("logged in to realm %q; Keycloak %s", tenancy.LoginOf(&server, "").Realm, version))
		if !equality.Semantic.DeepEqual(before.Conditions, server.Status.Conditions) {
			notices = append(notices, serverNotice{corev1.EventTypeNormal, secretsv1beta1.ReasonConnected, "Connect", "connected to Keycloak " + version})
		}
	}
	if n, ok := reportLegacyGrants(&server, before); ok {
		notices = append(notices, n)
	}
	server.Status.ObservedGeneration = server.Generation
	if serr := conditions.UpdateStatus(ctx, r.Client, &server, before, &server.Status); serr != nil {
		return ctrl.Result{}, serr
	}
	for _, n := range notices {
		r.Recorder.Eventf(&server, nil, n.eventType, n.reason, n.action, "%s", n.message)
	}
	if err != nil {
		return ctrl.Result{}, err // retried with capped backoff
	}
	return ctrl.Result{RequeueAfter: ServerCheckInterval}, nil
}

// serverNotice is an Event of a server's check, recorded once its status
// is written.
type serverNotice struct{ eventType, reason, action, message string }

// reportLegacyGrants keeps a LegacyGrants condition while
// spec.allowedNamespaces still grants read access (the admin's opt-in for
// the upgrade), and returns a Warning when it appears: visible in kubectl
// describe for as long as it lasts, not only until an Event expires.
func reportLegacyGrants(server *secretsv1beta1.KeycloakServer, before *secretsv1beta1.KeycloakServerStatus) (serverNotice, bool) {
	if !tenancy.LegacyGrantsInEffect(server) {
		meta.RemoveStatusCondition(&server.Status.Conditions, secretsv1beta1.TypeLegacyGrants)
		return serverNotice{}, false
	}
	msg := fmt.Sprintf("spec.allowedNamespaces lets %s read any client of this server (annotation %s=true): replace it with spec.access grants",
		strings.Join(server.Spec.AllowedNamespaces, ", "), tenancy.LegacyNamespaceGrantsAnnotation)
	conditions.Set(&server.Status.Conditions, server.Generation, secretsv1beta1.TypeLegacyGrants, true, secretsv1beta1.ReasonLegacyGrants, msg)
	if c := meta.FindStatusCondition(before.Conditions, secretsv1beta1.TypeLegacyGrants); c == nil || c.Message != msg {
		return serverNotice{corev1.EventTypeWarning, secretsv1beta1.ReasonLegacyGrants, "Grant", msg}, true
	}
	return serverNotice{}, false
}

func (r *KeycloakServerReconciler) version(ctx context.Context, server *secretsv1beta1.KeycloakServer) (string, error) {
	kc, err := r.Clients.Client(ctx, server)
	if err != nil {
		return "", err
	}
	return kc.Version(ctx)
}

// SetupWithManager watches KeycloakServers, and their credentials Secrets
// when a Credentials cache is given.
func (r *KeycloakServerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&secretsv1beta1.KeycloakServer{}).
		WithOptions(controller.Options{
			RateLimiter: requeue.RateLimiter(r.MaxBackoff),
		}).
		Named("keycloakserver")
	if r.Credentials != nil {
		secrets := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
		b = b.WatchesRawSource(source.Kind(r.Credentials, secrets, handler.TypedEnqueueRequestsFromMapFunc(r.serversNaming)))
	}
	return b.Complete(r)
}

// serversNaming maps a credentials Secret to the KeycloakServers that name it.
func (r *KeycloakServerReconciler) serversNaming(ctx context.Context, secret *metav1.PartialObjectMetadata) []reconcile.Request {
	var servers secretsv1beta1.KeycloakServerList
	if err := r.List(ctx, &servers, client.DisableReadYourWritesConsistency); err != nil {
		logf.FromContext(ctx).Error(err, "list KeycloakServers for a credentials Secret", "secret", secret.Name)
		return nil
	}
	return watches.Requests(servers.Items, func(s *secretsv1beta1.KeycloakServer) bool {
		return s.Spec.CredentialsSecretRef.Name == secret.Name
	})
}
