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

package vaultapp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	vaultcontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/resourcemetrics"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

func shopAPI(ns string) *vaultv1beta1.VaultApp {
	return &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-api", Namespace: ns},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{
				{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
			}},
		},
	}
}

func TestV1beta1VaultAppWritesPolicyAndRoleAndReadsBackAsV1alpha1(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	if err := op.Client.Create(ctx, shopAPI(ns)); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "shop-api"}
	app := waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)

	name := "app." + ns + ".shop-api"
	if app.Status.PolicyName != name || app.Status.RoleName != name {
		t.Errorf("status names = %q/%q, want %q", app.Status.PolicyName, app.Status.RoleName, name)
	}
	for _, typ := range []string{vaultv1beta1.TypePolicySynced, vaultv1beta1.TypeRoleSynced} {
		waitCondition(t, key, typ, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, time.Second)
	}
	waitCondition(t, key, vaultv1beta1.TypeAccessGranted, metav1.ConditionTrue, vaultv1beta1.ReasonGranted, time.Second)
	if app.Status.LastSyncTime == nil {
		t.Error("lastSyncTime not set")
	}
	if !controllerHasFinalizer(app) {
		t.Error("no cleanup finalizer on the VaultApp")
	}

	// The first line is the ownership mark: the operator touches no policy
	// without it (or one it had in step, per the status). It names the
	// cluster: by default, by its kube-system namespace's UID.
	var kubeSystem corev1.Namespace
	if err := op.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`# Managed by vault-keycloak-operator for VaultApp %[1]s/shop-api (uid %[2]s) in cluster %[3]s.
# Edits made here are reverted at the next refresh.

path "secret/data/%[1]s/db/*" {
  capabilities = ["read", "list"]
}

path "secret/metadata/%[1]s/db/*" {
  capabilities = ["read", "list"]
}
`, ns, app.UID, kubeSystem.UID)
	if got := readPolicy(t, name); got != want {
		t.Errorf("policy in Vault:\n%s\nwant:\n%s", got, want)
	}
	role := readRole(t, name)
	if role == nil {
		t.Fatal("role not written")
	}
	NewWithT(t).Expect(role["bound_service_account_names"]).To(Equal([]any{"shop-api"}))
	NewWithT(t).Expect(role["bound_service_account_namespaces"]).To(Equal([]any{ns}))
	NewWithT(t).Expect(role["token_policies"]).To(Equal([]any{name}))
	NewWithT(t).Expect(fmt.Sprint(role["token_ttl"])).To(Equal("3600"), "defaulted tokenTTL 1h")
	waitEvent(t, ns, "shop-api", vaultv1beta1.ReasonCreated)

	// The same object, read as v1alpha1.
	var alpha vaultv1alpha1.VaultApp
	if err := op.Client.Get(ctx, key, &alpha); err != nil {
		t.Fatalf("read as v1alpha1: %v", err)
	}
	NewWithT(t).Expect(alpha.Spec).To(Equal(vaultv1alpha1.VaultAppSpec{
		VaultPolicy: vaultv1alpha1.PresetRead, ServiceAccount: "shop-api", SecretPaths: []string{"db/*"},
	}))
	NewWithT(t).Expect(alpha.Status.PolicyName).To(Equal(name))
}

func TestV1alpha1VaultAppReadsBackAsV1beta1(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, allowAll)
	alpha := &vaultv1alpha1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns},
		Spec: vaultv1alpha1.VaultAppSpec{
			VaultPolicy: vaultv1alpha1.PresetReadWrite, ServiceAccount: "legacy-sa", SecretPaths: []string{"db", "stripe"},
		},
	}
	if err := op.Client.Create(ctx, alpha); err != nil {
		t.Fatalf("create v1alpha1: %v", err)
	}
	key := client.ObjectKeyFromObject(alpha)
	app := waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)

	rw := []vaultv1beta1.Capability{"create", "read", "update", "patch", "delete", "list"}
	NewWithT(t).Expect(app.Spec.Policy.Rules).To(Equal([]vaultv1beta1.PolicyRule{
		{Path: "db", Capabilities: rw}, {Path: "stripe", Capabilities: rw},
	}))
	NewWithT(t).Expect(app.Spec.KubernetesAuth.ServiceAccounts).To(Equal([]string{"legacy-sa"}))
	NewWithT(t).Expect(app.Spec.DeletionPolicy).To(Equal(vaultv1beta1.DeletionPolicyDelete), "defaulted")
	policy := readPolicy(t, app.Status.PolicyName)
	for _, want := range []string{
		fmt.Sprintf("path \"secret/data/%s/stripe\" {\n  capabilities = [\"create\", \"read\", \"update\", \"patch\", \"delete\", \"list\"]\n}", ns),
		fmt.Sprintf("path \"secret/metadata/%s/db\" {\n  capabilities = [\"read\", \"list\"]\n}", ns),
	} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy lacks %q:\n%s", want, policy)
		}
	}

	// Read again as v1alpha1: what the author wrote comes back unchanged.
	var back vaultv1alpha1.VaultApp
	if err := op.Client.Get(ctx, key, &back); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(back.Spec).To(Equal(alpha.Spec))
}

// TestWorkloadLogsInWithItsRole runs the whole chain a workload relies on:
// Vault's Kubernetes auth asks the API server (TokenReview) about a
// ServiceAccount token, and the role the operator wrote decides the rest.
func TestWorkloadLogsInWithItsRole(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	other := newNamespace(t, nil)
	for _, sa := range []struct{ ns, name string }{{ns, "shop-api"}, {ns, "intruder"}, {other, "shop-api"}} {
		if err := op.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.name, Namespace: sa.ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Client.Create(ctx, shopAPI(ns)); err != nil {
		t.Fatal(err)
	}
	app := waitCondition(t, client.ObjectKey{Namespace: ns, Name: "shop-api"}, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)

	// Secrets the administrator stored: one under the namespace's prefix, one of another namespace.
	for _, path := range []string{"secret/data/" + ns + "/db/password", "secret/data/" + other + "/db/password"} {
		if _, err := admin.Logical().Write(path, map[string]any{"data": map[string]any{"value": "s3cret"}}); err != nil {
			t.Fatalf("write %s: %v", path, err)
		}
	}

	login := func(namespace, sa string) (*vaultapi.Client, error) {
		jwt, err := serviceAccountToken(ctx, namespace, sa)
		if err != nil {
			t.Fatal(err)
		}
		c, err := admin.Clone()
		if err != nil {
			t.Fatal(err)
		}
		c.ClearToken()
		secret, err := c.Logical().Write("auth/kubernetes/login", map[string]any{"role": app.Status.RoleName, "jwt": jwt})
		if err != nil {
			return nil, err
		}
		c.SetToken(secret.Auth.ClientToken)
		return c, nil
	}

	workload, err := login(ns, "shop-api")
	if err != nil {
		t.Fatalf("the workload's ServiceAccount could not log in: %v", err)
	}
	secret, err := workload.Logical().Read("secret/data/" + ns + "/db/password")
	if err != nil || secret == nil {
		t.Fatalf("the workload could not read its own secret: %v", err)
	}
	if _, err := workload.Logical().Read("secret/data/" + other + "/db/password"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("reading another namespace's secret: err = %v, want permission denied", err)
	}
	if _, err := login(ns, "intruder"); err == nil {
		t.Fatal("another ServiceAccount of the namespace logged in with the role")
	}
	if _, err := login(other, "shop-api"); err == nil {
		t.Fatal("a ServiceAccount of the same name in another namespace logged in with the role")
	}
}

func TestDriftInVaultIsRepairedAndASteadyResyncOnlyReads(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	app := shopAPI(ns)
	app.Spec.RefreshInterval = &metav1.Duration{Duration: 30 * time.Second}
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	app = waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
	name := app.Status.PolicyName
	policy := readPolicy(t, name)

	// A steady resync: reads only. The first refresh comes within two
	// intervals (spread), later ones exactly one interval apart.
	writes := vaultWrites()
	reads := vaultReads()
	NewWithT(t).Eventually(vaultReads).WithTimeout(70*time.Second).WithPolling(time.Second).Should(BeNumerically(">=", reads+2),
		"the refresh read the policy and the role again")
	if got := vaultWrites(); got != writes {
		t.Fatalf("a resync with nothing changed wrote to Vault: %v writes, want %v", got, writes)
	}

	// Drift made by hand in Vault.
	if err := admin.Sys().PutPolicy(name, `path "secret/*" { capabilities = ["sudo", "read"] }`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Logical().Delete("auth/kubernetes/role/" + name); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string { return readPolicy(t, name) }).
		WithTimeout(40*time.Second).WithPolling(time.Second).Should(Equal(policy), "policy restored within refreshInterval")
	NewWithT(t).Eventually(func() map[string]any { return readRole(t, name) }).
		WithTimeout(5*time.Second).ShouldNot(BeNil(), "role restored")
	waitEvent(t, ns, app.Name, vaultv1beta1.ReasonDriftRepaired)
}

// TestARefreshRequestRepairsDriftNow: drift made by hand, an hour before
// the refresh would find it; the request repairs it now, once.
func TestARefreshRequestRepairsDriftNow(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	app := shopAPI(ns)
	app.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	app = waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
	name := app.Status.PolicyName
	policy := readPolicy(t, name)
	if err := admin.Sys().PutPolicy(name, `path "secret/*" { capabilities = ["sudo", "read"] }`); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := op.Client.Get(ctx, key, app); err != nil {
			return err
		}
		app.Annotations = map[string]string{vaultv1beta1.RefreshRequestAnnotation: "ticket-9"}
		return op.Client.Update(ctx, app)
	}); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string { return readPolicy(t, name) }).
		WithTimeout(10*time.Second).WithPolling(250*time.Millisecond).Should(Equal(policy), "the refresh request did not repair the policy")
	NewWithT(t).Eventually(func() string {
		if err := op.Client.Get(ctx, key, app); err != nil {
			t.Fatal(err)
		}
		return app.Status.LastRefreshRequest
	}).WithTimeout(10 * time.Second).Should(Equal("ticket-9"))
	waitEvent(t, ns, app.Name, vaultv1beta1.ReasonDriftRepaired)

	// The same request is not honoured again: a second hand edit stays
	// until a new id (or the refresh) comes.
	if err := admin.Sys().PutPolicy(name, `path "secret/*" { capabilities = ["sudo", "read"] }`); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Consistently(func() string { return readPolicy(t, name) }).
		WithTimeout(3*time.Second).WithPolling(500*time.Millisecond).ShouldNot(Equal(policy), "repaired without a new request")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := op.Client.Get(ctx, key, app); err != nil {
			return err
		}
		app.Annotations[vaultv1beta1.RefreshRequestAnnotation] = "ticket-10"
		return op.Client.Update(ctx, app)
	}); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string { return readPolicy(t, name) }).
		WithTimeout(10*time.Second).WithPolling(250*time.Millisecond).Should(Equal(policy), "a new request did not repair the policy")
}

// TestTheResourceGaugeShowsReadyByNamespace: what an alert on resources
// not Ready reads, from the manager's own registry.
func TestTheResourceGaugeShowsReadyByNamespace(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	app := shopAPI(ns)
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, client.ObjectKeyFromObject(app), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
	series := func() float64 {
		families, err := ctrlmetrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() != resourcemetrics.Name {
				continue
			}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["kind"] == "VaultApp" && labels["namespace"] == ns && labels["ready"] == "True" && labels["reason"] == vaultv1beta1.ReasonSynced {
					return m.GetGauge().GetValue()
				}
			}
		}
		return 0
	}
	NewWithT(t).Eventually(series).WithTimeout(10 * time.Second).Should(Equal(1.0))
}

func vaultWrites() float64 {
	return vaultRequests(vaultclientOps.writes...)
}

func vaultReads() float64 {
	return vaultRequests(vaultclientOps.reads...)
}

func TestDeletionRemovesOrRetainsVaultState(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []vaultv1beta1.DeletionPolicy{vaultv1beta1.DeletionPolicyDelete, vaultv1beta1.DeletionPolicyRetain} {
		t.Run(string(policy), func(t *testing.T) {
			// Retain is the cluster admin's to allow, per namespace.
			ns := newNamespace(t, map[string]string{tenancy.AllowRetainAnnotation: "true"})
			app := shopAPI(ns)
			app.Spec.DeletionPolicy = policy
			if err := op.Client.Create(ctx, app); err != nil {
				t.Fatal(err)
			}
			app = waitCondition(t, client.ObjectKeyFromObject(app), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
			name := app.Status.PolicyName
			if err := op.Client.Delete(ctx, app); err != nil {
				t.Fatal(err)
			}
			waitGone(t, app)
			policyText, _ := admin.Sys().GetPolicy(name)
			role := readRole(t, name)
			if policy == vaultv1beta1.DeletionPolicyDelete && (policyText != "" || role != nil) {
				t.Fatalf("after delete: policy %q, role %v still in Vault", policyText, role)
			}
			if policy == vaultv1beta1.DeletionPolicyRetain && (policyText == "" || role == nil) {
				t.Fatalf("after delete with Retain: policy or role removed from Vault")
			}
			if policy == vaultv1beta1.DeletionPolicyRetain && !strings.HasPrefix(policyText, "# Retained by vault-keycloak-operator from VaultApp "+ns+"/shop-api") {
				t.Fatalf("retained policy not marked as released by the operator:\n%s", policyText)
			}
			waitEvent(t, ns, app.Name, map[vaultv1beta1.DeletionPolicy]string{
				vaultv1beta1.DeletionPolicyDelete: vaultv1beta1.ReasonDeleted, vaultv1beta1.DeletionPolicyRetain: vaultv1beta1.ReasonRetained,
			}[policy])
		})
	}
}

// A VaultApp that never reached Vault (its namespace lost the grant it
// needed) is still deleted without trouble.
func TestVaultAppThatNeverSyncedCanBeDeleted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, allowAll)
	app := shopAPI(ns)
	app.Name = "writer"
	app.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"create"}
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	// The admin takes the grant back before... the operator keeps the rule.
	var namespace corev1.Namespace
	if err := op.Client.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		t.Fatal(err)
	}
	namespace.Annotations = nil
	if err := op.Client.Update(ctx, &namespace); err != nil {
		t.Fatal(err)
	}
	got := waitCondition(t, client.ObjectKeyFromObject(app), vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed, 20*time.Second)
	if msg := conditionMessage(got, vaultv1beta1.TypeReady); !strings.Contains(msg, `create not allowed in namespace`) {
		t.Errorf("Ready message = %q", msg)
	}
	// The operator may have written the policy before the grant was taken
	// back (it then removed it: GrantRevoked) or not (NotAllowed); either
	// way nothing is in Vault now.
	NewWithT(t).Eventually(func() bool {
		events := op.Events(t, ns, app.Name)
		return len(events[vaultv1beta1.ReasonNotAllowed]) > 0 || len(events[vaultv1beta1.ReasonGrantRevoked]) > 0
	}).WithTimeout(10*time.Second).Should(BeTrue(), "a NotAllowed or GrantRevoked Event")
	if text, _ := admin.Sys().GetPolicy(tenancy.PolicyName("", ns, app.Name)); text != "" {
		t.Fatalf("a policy is in Vault for a VaultApp whose grant was taken back:\n%s", text)
	}
	if err := op.Client.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitGone(t, app)
}

func TestVaultOutageIsReportedAndRecovered(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	app := shopAPI(ns)
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(app)
	app = waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
	doomed := shopAPI(ns)
	doomed.Name = "doomed"
	if err := op.Client.Create(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, client.ObjectKeyFromObject(doomed), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)

	vaultServer.Stop()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = vaultServer.Restart(ctx)
			_ = prepareVault(ctx)
		}
	})

	// A spec change needs Vault: it fails, and says so.
	app.Spec.KubernetesAuth.TokenTTL = &metav1.Duration{Duration: 2 * time.Hour}
	if err := op.Client.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	down := waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonVaultUnavailable, 20*time.Second)
	if msg := conditionMessage(down, vaultv1beta1.TypeReady); !strings.Contains(msg, "connection refused") {
		t.Errorf("Ready message while Vault is down = %q, want the cause", msg)
	}
	waitEvent(t, ns, app.Name, vaultv1beta1.ReasonVaultUnavailable)

	// Deleting while Vault is down is not dropped: the VaultApp stays until Vault answers.
	if err := op.Client.Delete(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, client.ObjectKeyFromObject(doomed), vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonDeleteFailed, 20*time.Second)

	// Vault returns (empty, as a dev server does): everything is written again.
	if err := vaultServer.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if err := prepareVault(ctx); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, key, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 30*time.Second)
	NewWithT(t).Expect(fmt.Sprint(readRole(t, app.Status.RoleName)["token_ttl"])).To(Equal("7200"))
	waitGone(t, doomed)
}

func TestNoTokenInLogsEventsOrStatus(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	app := shopAPI(ns)
	if err := op.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	app = waitCondition(t, client.ObjectKeyFromObject(app), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
	secret := vaultServer.Token
	if strings.Contains(op.Logs(), secret) {
		t.Error("the Vault token appears in the manager's logs")
	}
	if strings.Contains(fmt.Sprintf("%+v", app.Status), secret) {
		t.Error("the Vault token appears in the status")
	}
	var list corev1.EventList
	if err := op.Client.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if strings.Contains(e.Message, secret) {
			t.Errorf("the Vault token appears in event %s/%s", e.Namespace, e.Name)
		}
	}
}

func waitGone(t *testing.T, app *vaultv1beta1.VaultApp) {
	t.Helper()
	NewWithT(t).Eventually(func() bool {
		err := op.Client.Get(context.Background(), client.ObjectKeyFromObject(app), &vaultv1beta1.VaultApp{})
		return client.IgnoreNotFound(err) == nil && err != nil
	}).WithTimeout(30*time.Second).Should(BeTrue(), "VaultApp %s is still there", app.Name)
}

func conditionMessage(app *vaultv1beta1.VaultApp, typ string) string {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

func controllerHasFinalizer(app *vaultv1beta1.VaultApp) bool {
	for _, f := range app.Finalizers {
		if f == vaultcontroller.Finalizer {
			return true
		}
	}
	return false
}
