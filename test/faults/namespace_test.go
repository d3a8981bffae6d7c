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

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// R8: a namespace holding VaultApps and KeycloakClientCredentials (whose
// Secrets go into it and into a consenting namespace) is deleted, as the
// namespace controller of kube-controller-manager deletes it:
//   - with Vault and Keycloak up, it is gone within 30 s;
//   - with Vault unreachable, it waits: each VaultApp says DeleteFailed
//     ("Vault does not answer"), the namespace's Events say what holds it,
//     and it is gone within 30 s of Vault's return;
//   - with Keycloak unreachable, nothing waits (removing Secrets needs no
//     Keycloak): gone within 30 s.
//
// Each time nothing is left in Vault or in the other namespace.
func TestNamespaceDeleted(t *testing.T) {
	const perKind = 10
	ctx := context.Background()
	w := newWorld(t)
	kcm, err := w.cluster.StartControllerManager("namespace")
	if err != nil {
		t.Fatal(err)
	}
	defer kcm.Stop()
	vaultLink, err := harness.StartLink(strings.TrimPrefix(w.vault.Addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer vaultLink.Close()
	cases := []struct {
		namespace string
		link      *harness.Link // cut during the deletion, nil for none
		waits     bool          // the deletion must wait for the link
	}{
		{namespace: "gone-up"},
		{namespace: "gone-vault-down", link: vaultLink, waits: true},
		{namespace: "gone-keycloak-down"}, // link set below
	}
	var namespaces []string
	for _, c := range cases {
		namespaces = append(namespaces, c.namespace)
	}
	m := w.startManager(t, "manager", "http://"+vaultLink.Addr)
	defer m.Stop()
	keycloakLink, _ := w.withKeycloak(t, "faults-r8", "r8-client", 1, namespaces...)
	cases[2].link = keycloakLink
	// "team" consents to receive Secrets from the three.
	var team corev1.Namespace
	if err := w.c.Get(ctx, client.ObjectKey{Name: "team"}, &team); err != nil {
		t.Fatal(err)
	}
	team.Annotations = map[string]string{tenancy.AllowedSourceNamespacesAnnotation: strings.Join(namespaces, ",")}
	if err := w.c.Update(ctx, &team); err != nil {
		t.Fatal(err)
	}

	for _, c := range cases {
		ns := c.namespace
		if err := w.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		for i := range perKind {
			app := vaultApp(fmt.Sprintf("app-%02d", i), "db/*")
			app.Namespace = ns
			kcc := &secretsv1beta1.KeycloakClientCredential{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kcc-%02d", i), Namespace: ns},
				Spec: secretsv1beta1.KeycloakClientCredentialSpec{
					Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "sso"}, Realm: "faults-r8", ClientID: "r8-client-00"},
					Target: secretsv1beta1.TargetSpec{SecretName: fmt.Sprintf("%s-kcc-%02d", ns, i), Namespaces: []string{ns, "team"}},
				},
			}
			for _, obj := range []client.Object{app, kcc} {
				if err := w.c.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
		}
		harness.Eventually(t, time.Minute, func() error { return allReady(ctx, w.c, ns, perKind) })
		if err := leftBehind(ctx, w, ns); err == nil {
			t.Fatalf("%s: the check of what is left finds nothing before the deletion: it cannot fail", ns)
		}

		if c.link != nil {
			c.link.Cut()
		}
		deleted := time.Now()
		if err := w.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if c.waits {
			harness.Eventually(t, 30*time.Second, func() error { return toldWhy(ctx, w.c, ns, perKind) })
			time.Sleep(10 * time.Second)
			if err := w.c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
				t.Fatalf("%s: gone while Vault was unreachable (%v): its policies could not have been removed", ns, err)
			}
			c.link.Restore()
			deleted = time.Now()
		}
		harness.Eventually(t, 30*time.Second, func() error {
			var left corev1.Namespace
			err := w.c.Get(ctx, client.ObjectKey{Name: ns}, &left)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("namespace %s still exists (%v): %+v\nkube-controller-manager:\n%s\nmanager:\n%s",
				ns, err, left.Status.Conditions, kcm.LogTail(15), m.LogTail(10))
		})
		gone := time.Since(deleted)
		if c.link != nil {
			c.link.Restore()
		}
		if err := leftBehind(ctx, w, ns); err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		t.Logf("R8 %s: %d VaultApps and %d KeycloakClientCredentials; namespace gone %s after the deletion%s; nothing left in Vault or in namespace team",
			ns, perKind, perKind, gone.Round(time.Millisecond), map[bool]string{true: " (counted from Vault's return)"}[c.waits])
	}
}

// allReady says what is not yet Ready among n VaultApps and n
// KeycloakClientCredentials of namespace.
func allReady(ctx context.Context, c client.Client, namespace string, n int) error {
	var apps vaultv1beta1.VaultAppList
	var kccs secretsv1beta1.KeycloakClientCredentialList
	if err := c.List(ctx, &apps, client.InNamespace(namespace)); err != nil {
		return err
	}
	if err := c.List(ctx, &kccs, client.InNamespace(namespace)); err != nil {
		return err
	}
	ready, first := 0, ""
	count := func(name string, conditions []metav1.Condition, generation int64) {
		if harness.ReadyFor(conditions, generation) {
			ready++
		} else if first == "" {
			first = fmt.Sprintf("%s: %+v", name, conditions)
		}
	}
	for _, a := range apps.Items {
		count("VaultApp "+a.Name, a.Status.Conditions, a.Generation)
	}
	for _, k := range kccs.Items {
		count("KeycloakClientCredential "+k.Name, k.Status.Conditions, k.Generation)
	}
	if ready != 2*n {
		return fmt.Errorf("%d of %d resources Ready in %s; first not Ready: %s", ready, 2*n, namespace, first)
	}
	return nil
}

// toldWhy checks that each VaultApp of the deleted namespace says why it
// waits, and that the namespace's Events say it too.
func toldWhy(ctx context.Context, c client.Client, namespace string, n int) error {
	var apps vaultv1beta1.VaultAppList
	if err := c.List(ctx, &apps, client.InNamespace(namespace)); err != nil {
		return err
	}
	told := 0
	for _, a := range apps.Items {
		r := meta.FindStatusCondition(a.Status.Conditions, vaultv1beta1.TypeReady)
		if r != nil && r.Reason == vaultv1beta1.ReasonDeleteFailed && strings.Contains(r.Message, "Vault does not answer") {
			told++
		}
	}
	if told != n {
		return fmt.Errorf("%d of %d VaultApps say %s: Vault does not answer", told, n, vaultv1beta1.ReasonDeleteFailed)
	}
	// In kube-system, never in default, where every tenant would read
	// another team's names and failures.
	toldIn := func(in string) (bool, error) {
		var events eventsv1.EventList
		if err := c.List(ctx, &events, client.InNamespace(in)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Kind == "Namespace" && e.Regarding.Name == namespace && e.Reason == vaultv1beta1.ReasonDeleteFailed &&
				strings.Contains(e.Note, "keeps finalizer") {
				return true, nil
			}
		}
		return false, nil
	}
	if inDefault, err := toldIn(metav1.NamespaceDefault); err != nil || inDefault {
		return fmt.Errorf("the Event on namespace %s is in default (err %v)", namespace, err)
	}
	if ok, err := toldIn(metav1.NamespaceSystem); err != nil || !ok {
		return fmt.Errorf("no %s Event on namespace %s in kube-system (err %v)", vaultv1beta1.ReasonDeleteFailed, namespace, err)
	}
	return nil
}

// leftBehind says what the deleted namespace left: policies or roles in
// Vault, Secrets in namespace team.
func leftBehind(ctx context.Context, w *world, namespace string) error {
	admin, err := w.vault.AdminClient()
	if err != nil {
		return err
	}
	policies, err := admin.Sys().ListPoliciesWithContext(ctx)
	if err != nil {
		return err
	}
	var left []string
	prefix := "app." + namespace + "."
	for _, p := range policies {
		if strings.HasPrefix(p, prefix) {
			left = append(left, "policy "+p)
		}
	}
	roles, err := admin.Logical().ListWithContext(ctx, "auth/kubernetes/role")
	if err != nil {
		return err
	}
	if roles != nil {
		for _, k := range roles.Data["keys"].([]any) {
			if strings.HasPrefix(k.(string), prefix) {
				left = append(left, "role "+k.(string))
			}
		}
	}
	var team corev1.SecretList
	if err := w.c.List(ctx, &team, client.InNamespace("team")); err != nil {
		return err
	}
	for _, s := range team.Items {
		if strings.HasPrefix(s.Name, namespace+"-") {
			left = append(left, "Secret team/"+s.Name)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left behind: %d, first %v", len(left), left[:min(3, len(left))])
	}
	return nil
}
