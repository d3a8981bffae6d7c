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

package bench

// Taking a run away between two measured runs. Nothing here is measured,
// so it goes the shortest way: the manager stopped (the next run starts
// its own), the admission webhooks' configurations taken away meanwhile
// (each finalizer removal is an UPDATE that both webhooks would answer),
// finalizers dropped, the objects deleted, and what the run wrote to Vault
// deleted by its admin.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// removeVaultApps takes a run's VaultApps away, with their policies and
// roles in Vault.
func (f *fleet) removeVaultApps(b *testing.B, run string) {
	b.Helper()
	defer f.spent.on("cleanup", time.Now())
	admin, err := f.vault.AdminClient()
	if err != nil {
		b.Fatal(err)
	}
	f.withoutWebhooks(b, func() {
		apps := f.dropFinalizers(b, run, vaultv1beta1.GroupVersion.WithKind("VaultAppList"), vaultv1beta1.CleanupFinalizer)
		// One DELETE per object: with a collection per namespace, P1's
		// later pairs ran slower (operator runs of 14–16 s after 9 s on
		// 2026-12-03), an aftermath not understood yet.
		parallel(b, len(apps), 16, func(i int) error {
			ctx := context.Background()
			app := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Namespace: apps[i].Namespace, Name: apps[i].Name}}
			if err := client.IgnoreNotFound(f.c.Delete(ctx, app)); err != nil {
				return err
			}
			name := tenancy.PolicyName("", app.Namespace, app.Name)
			if _, err := admin.Logical().DeleteWithContext(ctx, "auth/kubernetes/role/"+name); err != nil {
				return err
			}
			return admin.Sys().DeletePolicyWithContext(ctx, name)
		})
	})
	f.noneLeft(b, run, vaultv1beta1.GroupVersion.WithKind("VaultAppList"))
}

// removeCredentials takes a run's credentials away, with their target
// Secrets (of the same name, as credential() makes them).
func (f *fleet) removeCredentials(b *testing.B, run string) {
	b.Helper()
	defer f.spent.on("cleanup", time.Now())
	f.withoutWebhooks(b, func() {
		creds := f.dropFinalizers(b, run, secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredentialList"), secretsv1beta1.CleanupFinalizer)
		f.deleteCollections(b, run, secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential"))
		parallel(b, len(creds), 16, func(i int) error {
			target := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: creds[i].Namespace, Name: creds[i].Name}}
			return client.IgnoreNotFound(f.c.Delete(context.Background(), target))
		})
	})
	f.noneLeft(b, run, secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredentialList"))
}

// noneLeft fails when an object of the run (of listKind) outlived its
// cleanup.
func (f *fleet) noneLeft(b *testing.B, run string, listKind schema.GroupVersionKind) {
	b.Helper()
	var left metav1.PartialObjectMetadataList
	left.SetGroupVersionKind(listKind)
	if err := f.c.List(context.Background(), &left, client.MatchingLabels{runLabel: run}); err != nil {
		b.Fatal(err)
	}
	if len(left.Items) > 0 {
		b.Fatalf("run %s: %d objects of %s left after the cleanup (%s holds %v)", run, len(left.Items), listKind.Kind, left.Items[0].Name, left.Items[0].Finalizers)
	}
}

// dropFinalizers removes finalizer from the run's objects of listKind and
// returns them (the manager stopped: withoutWebhooks).
func (f *fleet) dropFinalizers(b *testing.B, run string, listKind schema.GroupVersionKind, finalizer string) []metav1.PartialObjectMetadata {
	b.Helper()
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(listKind)
	if err := f.c.List(context.Background(), &list, client.MatchingLabels{runLabel: run}); err != nil {
		b.Fatal(err)
	}
	parallel(b, len(list.Items), 16, func(i int) error {
		obj := &list.Items[i]
		patch := client.MergeFrom(obj.DeepCopy())
		if !controllerutil.RemoveFinalizer(obj, finalizer) {
			return nil
		}
		return client.IgnoreNotFound(f.c.Patch(context.Background(), obj, patch))
	})
	return list.Items
}

// The operator's webhook configurations, as envtest installs them from
// config/webhook.
var webhookConfigurations = []client.Object{
	&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "mutating-webhook-configuration"}},
	&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "validating-webhook-configuration"}},
}

// withoutWebhooks runs do with the operator's admission webhook
// configurations deleted (the manager stopped first: nothing serves them
// meanwhile), and puts them back, whatever do did. It then waits until the
// API server calls the mutating webhook again, on a dry-run create, so the
// next run's creates are defaulted as ever; the next manager serves it.
func (f *fleet) withoutWebhooks(b *testing.B, do func()) {
	b.Helper()
	ctx := context.Background()
	f.stopManager()
	var saved []client.Object
	for _, o := range webhookConfigurations {
		o := o.DeepCopyObject().(client.Object)
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			b.Fatalf("webhook configuration %s: %v", o.GetName(), err)
		}
		saved = append(saved, o)
	}
	defer func() {
		for _, o := range saved {
			o.SetResourceVersion("")
			o.SetUID("")
			o.SetCreationTimestamp(metav1.Time{})
			o.SetManagedFields(nil)
			if err := f.c.Create(ctx, o); err != nil {
				b.Errorf("put the webhook configuration %s back: %v", o.GetName(), err)
			}
		}
		// No manager serves the webhooks now: a create the API server
		// sends to them fails, one it does not succeeds.
		harness.Eventually(b, 10*time.Second, func() error {
			err := f.c.Create(ctx, vaultApp("webhook-probe", 0), client.DryRunAll)
			if err != nil && strings.Contains(err.Error(), "failed calling webhook") {
				return nil
			}
			return fmt.Errorf("the API server does not call the webhooks again yet (a dry-run create: %v)", err)
		})
	}()
	for _, o := range saved {
		if err := f.c.Delete(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	do()
}
