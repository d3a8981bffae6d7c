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

package tenancy

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
)

// TestATenantWritingDuringTheMigrationDoesNotFailIt: the storage migration
// lists the VaultApps and rewrites them one by one; right after the first
// rewrite, the tenant edits every one of hers, so every later rewrite of
// them meets a conflict. The run must finish (the edited objects are
// stored in the storage version already), with storedVersions trimmed and
// the tenant's edits intact.
func TestATenantWritingDuringTheMigrationDoesNotFailIt(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const crdName = "vaultapps.vault.exemple.com"
	var mine []*vaultv1beta1.VaultApp
	for i := range 5 {
		a := vaultApp(own, fmt.Sprintf("migrating-%d", i))
		g.Expect(tenant.Create(ctx, a)).To(Succeed())
		mine = append(mine, a)
	}
	t.Cleanup(func() {
		for _, a := range mine {
			_ = op.Client.Delete(ctx, a)
		}
	})
	// An earlier release stored v1alpha1: the admin's upgrade left both.
	var crd apiextensionsv1.CustomResourceDefinition
	g.Expect(op.Client.Get(ctx, client.ObjectKey{Name: crdName}, &crd)).To(Succeed())
	crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
	g.Expect(op.Client.Status().Update(ctx, &crd)).To(Succeed())

	dc, err := discovery.NewDiscoveryClientForConfig(op.Config)
	g.Expect(err).NotTo(HaveOccurred())
	edited := false
	m := &migration.Migrator{Client: op.Client, Discovery: dc, Path: migration.PathOperator, PageSize: 500, Log: logf.Log.WithName("migration"),
		Progress: func(_ string, migrated int) {
			if migrated != 1 || edited {
				return
			}
			edited = true
			for _, a := range mine {
				g.Expect(update(ctx, a, func() {
					if a.Labels == nil {
						a.Labels = map[string]string{}
					}
					a.Labels["edited-during-migration"] = "yes"
				})).To(Succeed())
			}
		}}
	results, err := m.Migrate(ctx, crdName)
	g.Expect(err).NotTo(HaveOccurred(), "the tenant's writes made the migration fail")
	g.Expect(edited).To(BeTrue())
	g.Expect(results).To(HaveLen(1))
	g.Expect(results[0].Migrated).To(BeNumerically(">=", len(mine)))
	g.Expect(op.Client.Get(ctx, client.ObjectKey{Name: crdName}, &crd)).To(Succeed())
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1beta1"}))
	for _, a := range mine {
		var now vaultv1beta1.VaultApp
		g.Expect(op.Client.Get(ctx, client.ObjectKeyFromObject(a), &now)).To(Succeed())
		g.Expect(now.Labels).To(HaveKeyWithValue("edited-during-migration", "yes"), "the tenant's edit of %s was lost", a.Name)
	}
}
