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
	"slices"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/requeue"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/watches"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// Indexes of KeycloakClientCredentials: by the KeycloakServer they read
// from, and by the namespaces they write to (a Namespace event looks up
// the resources it concerns instead of going through all of them).
const (
	serverRefIndex       = "spec.source.serverRef.name"
	targetNamespaceIndex = "targetNamespaces"
)

// serverRefOf is serverRefIndex's value.
func serverRefOf(o client.Object) []string {
	return []string{o.(*secretsv1beta1.KeycloakClientCredential).Spec.Source.ServerRef.Name}
}

// SetupWithManager watches the resources, the Secrets they own (through the
// label-filtered cache: a deleted or edited Secret is repaired at once), their
// KeycloakServers, and Namespaces (consent).
func (r *KeycloakClientCredentialReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &secretsv1beta1.KeycloakClientCredential{}, serverRefIndex, serverRefOf); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &secretsv1beta1.KeycloakClientCredential{}, targetNamespaceIndex,
		func(o client.Object) []string {
			return tenancy.TargetNamespaces(o.(*secretsv1beta1.KeycloakClientCredential))
		}); err != nil {
		return err
	}
	if r.Outage == nil {
		r.Outage = outage.New(0)
	}
	if err := mgr.Add(r.Outage); err != nil {
		return err
	}
	r.readers = newReadersOfRotated()
	b := ctrl.NewControllerManagedBy(mgr).
		// Spec changes, deletion, a finalizer removed by hand: not the
		// operator's own status writes.
		For(&secretsv1beta1.KeycloakClientCredential{}, builder.WithPredicates(predicate.Or(watches.SpecChangedOrFinalizerMissing(CredentialFinalizer),
			watches.AnnotationsChanged(secretsv1beta1.RefreshRequestAnnotation, secretsv1beta1.RotationRequestAnnotation)))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.ownerOfSecret), builder.WithPredicates(r.echoes.notEchoes())).
		// A deleted server's pooled client is dropped on every shard (the
		// KeycloakServer controller, which drops it too, runs on shard 0).
		Watches(&secretsv1beta1.KeycloakServer{}, watches.ForgetOnDelete{EventHandler: handler.EnqueueRequestsFromMapFunc(r.usersOfServer), Forget: r.Clients.Forget}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.targetingNamespace), builder.WithPredicates(watches.NamespaceGrantsChanged)).
		// Resources that waited for their Keycloak server, once it answers.
		WatchesRawSource(r.Outage.Source()).
		// The other readers of a client this process rotated.
		WatchesRawSource(r.readers.source())
	if r.Rotations != nil {
		// The readers of a client another shard rotated.
		b = b.WatchesRawSource(r.Rotations.source(r.wakeReaders))
	}
	if r.RegenerationsEvery > 0 {
		// The readers of a client regenerated outside this process.
		b = b.WatchesRawSource(r.regenerationSource())
	}
	return b.WithOptions(controller.Options{
		MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles),
		RateLimiter:             requeue.RateLimiter(r.MaxBackoff),
	}).
		Named("keycloakclientcredential").
		// The shard's namespaces alone, once the gate opens.
		Complete(r.Shard.Filter(r, r.Gate))
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
	if err := r.Get(ctx, key, &owner, client.DisableReadYourWritesConsistency); err != nil {
		return nil // gone (its finalizer cleaned up) or never existed
	}
	if owner.Spec.Target.SecretName != o.GetName() || !slices.Contains(tenancy.TargetNamespaces(&owner), o.GetNamespace()) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

func (r *KeycloakClientCredentialReconciler) usersOfServer(ctx context.Context, o client.Object) []reconcile.Request {
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list, client.MatchingFields{serverRefIndex: o.GetName()}, client.DisableReadYourWritesConsistency); err != nil {
		logf.FromContext(ctx).Error(err, "list users of a KeycloakServer", "server", o.GetName())
		return nil
	}
	return watches.Requests[secretsv1beta1.KeycloakClientCredential](list.Items, nil)
}

func (r *KeycloakClientCredentialReconciler) targetingNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list, client.MatchingFields{targetNamespaceIndex: o.GetName()}, client.DisableReadYourWritesConsistency); err != nil {
		logf.FromContext(ctx).Error(err, "list KeycloakClientCredentials targeting a namespace", "namespace", o.GetName())
		return nil
	}
	return watches.Requests[secretsv1beta1.KeycloakClientCredential](list.Items, nil)
}
