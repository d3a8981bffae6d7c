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
	"maps"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// TestAnotherTeamsCopiesAndKeysSurvive: the tenant's credential writes into
// a second team's consenting namespace; that team copies the delivered
// Secret (labels and annotations included) and adds a key of its own to
// it. Whatever the tenant then does with her credential — take the
// namespace out of its targets, delete it — the copy stays whole and the
// team's key stays; only what the operator wrote goes.
func TestAnotherTeamsCopiesAndKeysSurvive(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	setNamespaceAnnotation(t, victim, tenancy.AllowedSourceNamespacesAnnotation, own)
	t.Cleanup(func() { setNamespaceAnnotation(t, victim, tenancy.AllowedSourceNamespacesAnnotation, "") })

	k := credential(own, "o-shared", appsRealm, "team-a-web")
	k.Spec.Target.Namespaces = []string{own, victim}
	if err := tenant.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)

	// The second team (its own rights, not the tenant's): a copy under
	// another name, and a key added to the delivered Secret.
	var delivered corev1.Secret
	if err := op.Client.Get(ctx, client.ObjectKey{Namespace: victim, Name: "o-shared-creds"}, &delivered); err != nil {
		t.Fatal(err)
	}
	cp := delivered.DeepCopy()
	cp.ObjectMeta = metav1.ObjectMeta{Namespace: victim, Name: "o-shared-copy", Labels: delivered.Labels, Annotations: delivered.Annotations}
	if err := op.Client.Create(ctx, cp); err != nil {
		t.Fatal(err)
	}
	copied := maps.Clone(cp.Data)
	delivered.Data["team-b.conf"] = []byte("team b's")
	if err := op.Client.Update(ctx, &delivered); err != nil {
		t.Fatal(err)
	}
	// Its own copy in the tenant's namespace too, by the tenant: hers to keep.
	var ownDelivered corev1.Secret
	if err := tenant.Get(ctx, client.ObjectKey{Namespace: own, Name: "o-shared-creds"}, &ownDelivered); err != nil {
		t.Fatal(err)
	}
	ownCopy := ownDelivered.DeepCopy()
	ownCopy.ObjectMeta = metav1.ObjectMeta{Namespace: own, Name: "o-shared-backup", Labels: ownDelivered.Labels, Annotations: ownDelivered.Annotations}
	if err := tenant.Create(ctx, ownCopy); err != nil {
		t.Fatal(err)
	}

	// The tenant takes the team's namespace out of the targets.
	if err := update(ctx, k, func() { k.Spec.Target.Namespaces = []string{own} }); err != nil {
		t.Fatal(err)
	}
	g.Eventually(func() map[string]string {
		var s corev1.Secret
		if err := op.Client.Get(ctx, client.ObjectKeyFromObject(&delivered), &s); err != nil {
			return map[string]string{"error": err.Error()}
		}
		return stringValues(s.Data)
	}).WithTimeout(settle).Should(Equal(map[string]string{"team-b.conf": "team b's"}),
		"retargeting must remove the operator's keys and keep the team's")
	var released corev1.Secret
	g.Expect(op.Client.Get(ctx, client.ObjectKeyFromObject(&delivered), &released)).To(Succeed())
	g.Expect(released.Labels).NotTo(HaveKey("app.kubernetes.io/managed-by"), "a released Secret still carries the operator's marks")

	// The tenant deletes her credential.
	if err := tenant.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(op.Client.Get(ctx, client.ObjectKeyFromObject(k), k))
	}).WithTimeout(settle).Should(BeTrue())
	g.Expect(apierrors.IsNotFound(op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: "o-shared-creds"}, &corev1.Secret{}))).To(BeTrue(),
		"the Secret the operator wrote, with nothing else in it, is deleted")
	for _, c := range []struct {
		key  client.ObjectKey
		want map[string][]byte
	}{
		{client.ObjectKey{Namespace: victim, Name: "o-shared-copy"}, copied},
		{client.ObjectKey{Namespace: own, Name: "o-shared-backup"}, ownCopy.Data},
	} {
		var s corev1.Secret
		if err := op.Client.Get(ctx, c.key, &s); err != nil {
			t.Fatalf("a copy was removed with the credential: %v", err)
		}
		g.Expect(stringValues(s.Data)).To(Equal(stringValues(c.want)), "copy %s changed", c.key)
	}
}

func stringValues(data map[string][]byte) map[string]string {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		out[k] = string(data[k])
	}
	return out
}

// TestAVaultAdminsRoleUnderAnAppNameIsLeftAlone: a Vault admin wrote a role
// under the name the tenant's VaultApp will use, granting that policy among
// others to another namespace's ServiceAccounts. The tenant's VaultApp must
// neither rewrite it (it would bind the tenant's ServiceAccounts) nor
// delete it with the VaultApp.
func TestAVaultAdminsRoleUnderAnAppNameIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	name := policyName(own, "o-role")
	admins := map[string]any{
		"bound_service_account_names":      []string{"deployer"},
		"bound_service_account_namespaces": []string{victim},
		"token_policies":                   []string{name, "ops-admin"},
		"token_ttl":                        600,
	}
	if _, err := vaultAdmin.Logical().Write("auth/kubernetes/role/"+name, admins); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = vaultAdmin.Logical().Delete("auth/kubernetes/role/" + name) })
	asWritten := role(t, name)

	a := vaultApp(own, "o-role")
	if err := tenant.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	msg := waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotOwned).Status.Conditions
	g.Expect(fmt.Sprint(msg)).To(ContainSubstring("role " + name + " exists in Vault and was not written for this VaultApp"))
	g.Expect(role(t, name)).To(Equal(asWritten), "the admin's role was rewritten")

	if err := tenant.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(op.Client.Get(ctx, client.ObjectKeyFromObject(a), a))
	}).WithTimeout(settle).Should(BeTrue())
	g.Expect(role(t, name)).To(Equal(asWritten), "the admin's role was deleted or changed with the VaultApp")
}
