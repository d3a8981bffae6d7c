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

package rbac

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/manifests"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestNamespaceUsersGetTheTenantKindsThroughTheBuiltInRoles: the bundle's
// editor and viewer roles of the namespaced kinds reach a namespace's
// admins, editors and viewers through the built-in admin, edit and view
// roles, as kube-controller-manager aggregates them (OLM v1 and Helm bind
// nothing of their own); the cluster-scoped kinds, which hold the admin's
// grants, reach no one that way.
func TestNamespaceUsersGetTheTenantKindsThroughTheBuiltInRoles(t *testing.T) {
	ctx := context.Background()
	pc, err := harness.StartProcessCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Stop()
	kcm, err := pc.StartControllerManager("clusterrole-aggregation")
	if err != nil {
		t.Fatal(err)
	}
	defer kcm.Stop()
	bundle, err := manifests.GetBundleFromDir(filepath.Join(harness.RepoRoot(), "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range bundle.Objects {
		if o.GetKind() == "ClusterRole" {
			if err := pc.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	const ns = "team"
	if err := pc.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"admin", "edit", "view"} {
		if err := pc.Client.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role + "-user", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: role + "-user"}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	may := func(user, verb, group, resource, subresource string) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource}}}
		if err := pc.Client.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	type right struct{ user, verb, group, resource, subresource string }
	rights := map[right]bool{}
	for _, user := range []string{"admin-user", "edit-user"} {
		for _, k := range [][2]string{{"vault.exemple.com", "vaultapps"}, {"secrets.carbogame.com", "keycloakclientcredentials"}} {
			rights[right{user, "create", k[0], k[1], ""}] = true
			rights[right{user, "patch", k[0], k[1], ""}] = true
			rights[right{user, "update", k[0], k[1], "status"}] = false // the operator's alone
		}
		rights[right{user, "get", "vault.exemple.com", "vaultservers", ""}] = false
		rights[right{user, "get", "secrets.carbogame.com", "keycloakservers", ""}] = false
	}
	for _, k := range [][2]string{{"vault.exemple.com", "vaultapps"}, {"secrets.carbogame.com", "keycloakclientcredentials"}} {
		rights[right{"view-user", "list", k[0], k[1], ""}] = true
		rights[right{"view-user", "create", k[0], k[1], ""}] = false
	}
	rights[right{"view-user", "list", "vault.exemple.com", "vaultservers", ""}] = false
	// The aggregation controller fills the built-in roles in shortly.
	NewWithT(t).Eventually(func() []string {
		var wrong []string
		for r, want := range rights {
			if got := may(r.user, r.verb, r.group, r.resource, r.subresource); got != want {
				wrong = append(wrong, fmt.Sprintf("%s %s %s.%s/%s: %v, want %v", r.user, r.verb, r.resource, r.group, r.subresource, got, want))
			}
		}
		return wrong
	}).WithTimeout(30*time.Second).WithPolling(time.Second).Should(BeEmpty(), "kube-controller-manager:\n%s", kcm.LogTail(20))
}
