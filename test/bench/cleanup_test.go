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
// and a later run must find the cluster as a fresh one would be: the
// run's objects are taken out of etcd, where the API server stores them,
// as a fresh etcd would not hold them. No finalizer, webhook, admission
// or informer does work for them, and the API server's watch cache
// follows etcd's deletions as it follows its own. The manager is stopped
// first (the next run starts its own, which lists the cluster anew);
// what the run wrote to Vault is deleted by its admin. Until 2026-12-06
// the objects were deleted through the API server (the webhooks taken
// away, each finalizer removed by a patch), which took 2m54s of a bench
// of 14m28s (docs/development.md).

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Where the API server stores the objects a run creates (its default
// --etcd-prefix, then the group and resource).
const (
	vaultAppsInStore   = "/registry/vault.exemple.com/vaultapps/"
	credentialsInStore = "/registry/secrets.carbogame.com/keycloakclientcredentials/"
	secretsInStore     = "/registry/secrets/"
)

// removeVaultApps takes a run's VaultApps away, with their policies and
// roles in Vault.
func (f *fleet) removeVaultApps(b *testing.B, run string) {
	b.Helper()
	defer f.spent.on("cleanup", time.Now())
	f.stopManager()
	admin, err := f.vault.AdminClient()
	if err != nil {
		b.Fatal(err)
	}
	listKind := vaultv1beta1.GroupVersion.WithKind("VaultAppList")
	apps := f.runObjects(b, run, listKind)
	keys := make([]string, 0, len(apps))
	for _, app := range apps {
		keys = append(keys, vaultAppsInStore+app.Namespace+"/"+app.Name)
	}
	f.removeFromStore(b, keys)
	parallel(b, len(apps), 16, func(i int) error {
		ctx := context.Background()
		name := tenancy.PolicyName("", apps[i].Namespace, apps[i].Name)
		if _, err := admin.Logical().DeleteWithContext(ctx, "auth/kubernetes/role/"+name); err != nil {
			return err
		}
		return admin.Sys().DeletePolicyWithContext(ctx, name)
	})
	f.noneLeft(b, run, listKind)
}

// removeCredentials takes a run's credentials away, with their target
// Secrets (of the same name, as credential() makes them).
func (f *fleet) removeCredentials(b *testing.B, run string) {
	b.Helper()
	defer f.spent.on("cleanup", time.Now())
	f.stopManager()
	listKind := secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredentialList")
	creds := f.runObjects(b, run, listKind)
	keys := make([]string, 0, 2*len(creds))
	for _, c := range creds {
		keys = append(keys, credentialsInStore+c.Namespace+"/"+c.Name, secretsInStore+c.Namespace+"/"+c.Name)
	}
	f.removeFromStore(b, keys)
	f.noneLeft(b, run, listKind)
}

// runObjects lists a run's objects of listKind.
func (f *fleet) runObjects(b *testing.B, run string, listKind schema.GroupVersionKind) []metav1.PartialObjectMetadata {
	b.Helper()
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(listKind)
	if err := f.c.List(context.Background(), &list, client.MatchingLabels{runLabel: run}); err != nil {
		b.Fatal(err)
	}
	return list.Items
}

// removeFromStore deletes keys from the control plane's etcd, in
// transactions of at most 100 operations (etcd refuses more than 128),
// and fails unless every key was there: a wrong path would leave the run
// behind unseen.
func (f *fleet) removeFromStore(b *testing.B, keys []string) {
	b.Helper()
	if f.etcd == nil {
		etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{f.cluster.Env.ControlPlane.Etcd.URL.String()}, DialTimeout: 5 * time.Second})
		if err != nil {
			b.Fatalf("connect to etcd: %v", err)
		}
		f.etcd = etcd
		b.Cleanup(func() { _ = etcd.Close() })
	}
	deleted := int64(0)
	for start := 0; start < len(keys); start += 100 {
		var ops []clientv3.Op
		for _, key := range keys[start:min(start+100, len(keys))] {
			ops = append(ops, clientv3.OpDelete(key))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := f.etcd.Txn(ctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			b.Fatalf("delete %d keys from etcd: %v", len(ops), err)
		}
		for _, r := range resp.Responses {
			deleted += r.GetResponseDeleteRange().Deleted
		}
	}
	if deleted != int64(len(keys)) {
		b.Fatalf("deleted %d of %d keys from etcd (the first: %s): a path is wrong, or an object was missing", deleted, len(keys), keys[0])
	}
}

// noneLeft waits until the API server's list shows no object of the run
// (of listKind): its watch cache follows etcd's deletions within moments,
// and the next run's manager must not list any of them.
func (f *fleet) noneLeft(b *testing.B, run string, listKind schema.GroupVersionKind) {
	b.Helper()
	harness.Eventually(b, 30*time.Second, func() error {
		if left := f.runObjects(b, run, listKind); len(left) > 0 {
			return fmt.Errorf("run %s: %d objects of %s left after the cleanup (%s)", run, len(left), listKind.Kind, left[0].Name)
		}
		return nil
	})
}
