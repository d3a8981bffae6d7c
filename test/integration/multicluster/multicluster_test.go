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

// Package multicluster proves that clusters sharing one Vault, each with its
// own kube-apiserver, auth mount and manager, never change or lose each
// other's policies and roles: the marks name their cluster, and the orphan
// sweep runs every second on both.
package multicluster_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// vaultServer is this package's own Vault: its sweeps run every second.
var vaultServer *harness.Vault

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	logDir, err := os.MkdirTemp("", "vko-multicluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if vaultServer, err = harness.StartVaultUnderTest(context.Background(), logDir); err != nil {
		fmt.Fprintln(os.Stderr, "start Vault:", err)
		return 1
	}
	defer vaultServer.Stop()
	return m.Run()
}

const (
	operatorNamespace = "vault-keycloak-operator"
	operatorAccount   = "controller-manager"
	// sweepEvery is the orphan sweep's interval in these tests.
	sweepEvery = time.Second
)

// cluster is one kube-apiserver with its manager, logging in to the shared
// Vault through its own Kubernetes auth mount, where its app roles go too.
type cluster struct {
	name, mount string
	op          *harness.Operator
	// id is the cluster's kube-system namespace's UID.
	id string
}

// startCluster starts a cluster named name. Its operator's Vault policy is
// the README's, at its own mount; confined to app-<prefix>.* when prefix
// is set, as the README shows for clusters that share a Vault.
func startCluster(t *testing.T, name, prefix string) *cluster {
	t.Helper()
	ctx := context.Background()
	c := &cluster{name: name, mount: "kubernetes-" + name}
	tokenPath := filepath.Join(t.TempDir(), "sa-token")
	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token = vaultServer.Addr, ""
	cfg.AuthMount, cfg.KubernetesAuthMount, cfg.ServiceAccountTokenPath = c.mount, c.mount, tokenPath
	op, err := harness.StartOperator(manager.Options{
		Vault: cfg, ClusterName: name, VaultNamePrefix: prefix, OperatorNamespace: operatorNamespace,
		OrphanSweepInterval: sweepEvery, MaxBackoff: 2 * time.Second,
	})
	if err != nil {
		t.Fatalf("start cluster %s: %v", name, err)
	}
	t.Cleanup(op.Stop)
	c.op = op
	var kubeSystem corev1.Namespace
	if err := op.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &kubeSystem); err != nil {
		t.Fatal(err)
	}
	c.id = string(kubeSystem.UID)
	// Its registrations go with it, as an admin removes them once a
	// cluster is gone: the next test may give its own cluster the name.
	t.Cleanup(func() {
		if err := vaultServer.ForgetRegistrationsOf(context.Background(), c.id); err != nil {
			t.Error(err)
		}
	})
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorAccount, Namespace: operatorNamespace}},
	} {
		if err := op.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	c.trustIn(t, vaultServer, prefix)
	token, err := harness.ServiceAccountToken(ctx, op.Config, operatorNamespace, operatorAccount)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenPath, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// trustIn sets the cluster up in v (or in a Vault namespace of it): its
// Kubernetes auth mount, and the operator's policy and role there, the
// README's, confined to app-<prefix>.* when prefix is set.
func (c *cluster) trustIn(t *testing.T, v *harness.Vault, prefix string) {
	t.Helper()
	ctx := context.Background()
	if err := v.ConfigureKubernetesAuthAt(ctx, c.mount, c.op.Client, c.op.Config); err != nil {
		t.Fatal(err)
	}
	policy := strings.ReplaceAll(harness.OperatorVaultPolicy, "auth/kubernetes/", "auth/"+c.mount+"/")
	if prefix != "" {
		policy = harness.OperatorVaultPolicyFor(c.mount, prefix)
	}
	if err := v.AllowOperatorAt(ctx, c.mount, "vault-keycloak-operator-"+c.name, policy, operatorNamespace, operatorAccount); err != nil {
		t.Fatal(err)
	}
}

// namespace creates a namespace of that name that may read and list.
func (c *cluster) namespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.op.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) createApp(t *testing.T, namespace, name string) client.ObjectKey {
	t.Helper()
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy:         vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: name + "/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{name}},
		},
	}
	if err := c.op.Client.Create(context.Background(), app); err != nil {
		t.Fatalf("create VaultApp %s/%s in %s: %v", namespace, name, c.name, err)
	}
	return client.ObjectKeyFromObject(app)
}

// wait waits for the VaultApp's Ready condition, and returns its message.
func (c *cluster) wait(t *testing.T, key client.ObjectKey, status metav1.ConditionStatus, reason string) string {
	t.Helper()
	app := harness.WaitCondition(t, c.op, key, func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions },
		vaultv1beta1.TypeReady, status, reason, 30*time.Second)
	for _, cond := range app.Status.Conditions {
		if cond.Type == vaultv1beta1.TypeReady {
			return cond.Message
		}
	}
	return ""
}

func (c *cluster) deleteApp(t *testing.T, key client.ObjectKey) {
	t.Helper()
	app := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	if err := c.op.Client.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() error {
		if err := c.op.Client.Get(context.Background(), key, app); err == nil {
			return fmt.Errorf("VaultApp %s still there in %s", key, c.name)
		}
		return nil
	})
}

// vaultState is every app.* and app-* policy and every role of the given mounts,
// read as the Vault admin: what the clusters must not change of each other.
func vaultState(t *testing.T, mounts ...string) map[string]string {
	t.Helper()
	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	names, err := admin.Sys().ListPolicies()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "app.") && !strings.HasPrefix(n, "app-") {
			continue
		}
		text, err := admin.Sys().GetPolicy(n)
		if err != nil {
			t.Fatal(err)
		}
		state["policy "+n] = text
	}
	for _, m := range mounts {
		list, err := admin.Logical().List("auth/" + m + "/role")
		if err != nil {
			t.Fatal(err)
		}
		if list == nil {
			continue
		}
		for _, k := range list.Data["keys"].([]any) {
			role, err := admin.Logical().Read("auth/" + m + "/role/" + k.(string))
			if err != nil {
				t.Fatal(err)
			}
			if role == nil {
				continue // removed since the listing (a sweep, a deletion)
			}
			state["role "+m+"/"+k.(string)] = fmt.Sprint(role.Data["token_policies"], role.Data["bound_service_account_names"], role.Data["bound_service_account_namespaces"])
		}
	}
	return state
}

// awaitSweeps waits until both managers have listed Vault's policies n
// more times each (once a sweep), at least.
func awaitSweeps(t *testing.T, n int) {
	t.Helper()
	start := vaultclient.RequestCount(vaultclient.OpListPolicies)
	harness.Eventually(t, time.Duration(4*n)*sweepEvery+10*time.Second, func() error {
		if got := vaultclient.RequestCount(vaultclient.OpListPolicies) - start; got < float64(2*n) {
			return fmt.Errorf("%v policy listings since, want %d (two managers, %d sweeps each)", got, 2*n, n)
		}
		return nil
	})
}

// changed lists what differs between two states: keys added, removed or
// changed.
func changed(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			out = append(out, "removed "+k)
		} else if w != v {
			out = append(out, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	return out
}

func writePolicy(t *testing.T, admin *vaultapi.Client, name, text string) {
	t.Helper()
	if err := admin.Sys().PutPolicy(name, text); err != nil {
		t.Fatal(err)
	}
}

// Two clusters with no name prefix, as two clusters upgraded from a release
// before the cluster identity: the same namespace/name maps to one policy,
// which stays with the cluster that wrote it.
func TestTwoClustersOnOneVaultWithoutPrefixes(t *testing.T) {
	east, west := startCluster(t, "east", ""), startCluster(t, "west", "")
	mounts := []string{east.mount, west.mount}
	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	// What others left in Vault: an earlier release's policy (a UID, no
	// cluster), a third cluster's orphan (its manager is down), and a
	// policy of someone else's under an app.* name.
	legacy := vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "legacy", UID: "written-by-0.3"}, nil)
	writePolicy(t, admin, "app.shop.legacy", legacy)
	writePolicy(t, admin, "app.shop.north", vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "north", UID: "n1", Cluster: "north"}, nil))
	writePolicy(t, admin, "app.shop.by-hand", `path "secret/data/shop/x" { capabilities = ["read"] }`)

	east.namespace(t, "shop")
	west.namespace(t, "shop")
	eastAPI := east.createApp(t, "shop", "api")
	eastOnly := east.createApp(t, "shop", "east-only")
	east.wait(t, eastAPI, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	east.wait(t, eastOnly, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	westAPI := west.createApp(t, "shop", "api")
	westOnly := west.createApp(t, "shop", "west-only")
	west.wait(t, westOnly, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	msg := west.wait(t, westAPI, metav1.ConditionFalse, vaultv1beta1.ReasonHeldByAnotherCluster)
	if !strings.Contains(msg, "policy app.shop.api in Vault belongs to cluster east") {
		t.Fatalf("west's shop/api says %q; want it to name cluster east", msg)
	}
	if mark := vaultclient.MarkOf(vaultState(t)["policy app.shop.api"]); mark.Owner.Cluster != "east" {
		t.Fatalf("app.shop.api is marked %+v, want cluster east's", mark)
	}

	// Sweeps every second on both: nothing of the other's changes, and
	// nothing either did not write (or cannot prove) is swept.
	before := vaultState(t, mounts...)
	awaitSweeps(t, 3)
	if diff := changed(before, vaultState(t, mounts...)); len(diff) > 0 {
		t.Fatalf("the sweeps changed Vault: %v", diff)
	}

	// A real orphan of west's (what a VaultApp leaves when its finalizer
	// never ran): west's sweep removes it; east's, which reads it too,
	// never did.
	orphan := west.createApp(t, "shop", "west-orphan")
	west.wait(t, orphan, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	left := vaultState(t)["policy app.shop.west-orphan"]
	roleLeft, err := admin.Logical().Read("auth/" + west.mount + "/role/app.shop.west-orphan")
	if err != nil {
		t.Fatal(err)
	}
	west.deleteApp(t, orphan)
	before = vaultState(t, mounts...)
	writePolicy(t, admin, "app.shop.west-orphan", left)
	if _, err := admin.Logical().Write("auth/"+west.mount+"/role/app.shop.west-orphan", roleLeft.Data); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 15*time.Second, func() error {
		if diff := changed(before, vaultState(t, mounts...)); len(diff) > 0 {
			return fmt.Errorf("Vault still differs from before the orphan was left: %v", diff)
		}
		return nil
	})
	west.op.WaitEvent(t, "shop", "west-orphan", vaultv1beta1.ReasonOrphanRemoved)

	// Deletions in one cluster take only that cluster's.
	before = vaultState(t, mounts...)
	west.deleteApp(t, westOnly)
	west.deleteApp(t, westAPI) // NotOwned: leaves east's policy as it is
	east.deleteApp(t, eastOnly)
	awaitSweeps(t, 2)
	want := []string{
		"removed policy app.shop.west-only", "removed role " + west.mount + "/app.shop.west-only",
		"removed policy app.shop.east-only", "removed role " + east.mount + "/app.shop.east-only",
	}
	if diff := changed(before, vaultState(t, mounts...)); !sameSet(diff, want) {
		t.Fatalf("deletions changed Vault by %v, want %v", diff, want)
	}
	east.wait(t, eastAPI, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	// The earlier release's policy, left alone by every sweep so far, is
	// adopted by the cluster that has its VaultApp.
	if got := vaultState(t)["policy app.shop.legacy"]; got != legacy {
		t.Fatalf("the earlier release's policy changed before any VaultApp claimed it:\n%s", got)
	}
	adopted := east.createApp(t, "shop", "legacy")
	east.wait(t, adopted, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if mark := vaultclient.MarkOf(vaultState(t)["policy app.shop.legacy"]); mark.Owner.Cluster != "east" || mark.Owner.UID == "written-by-0.3" {
		t.Fatalf("app.shop.legacy is marked %+v after its adoption by east", mark)
	}
	for _, kept := range []string{"policy app.shop.north", "policy app.shop.by-hand"} {
		if _, ok := vaultState(t)[kept]; !ok {
			t.Errorf("%s was removed", kept)
		}
	}
}

// Two clusters with their own name prefixes, each operator confined by its
// Vault policy to app-<prefix>.*: the same VaultApp gets a policy and a
// role in each, and a workload of each logs in with its own.
func TestTwoClustersOnOneVaultWithPrefixes(t *testing.T) {
	east, west := startCluster(t, "east", "east"), startCluster(t, "west", "west")
	mounts := []string{east.mount, west.mount}
	for _, c := range []*cluster{east, west} {
		c.namespace(t, "shop")
		c.wait(t, c.createApp(t, "shop", "api"), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
		var app vaultv1beta1.VaultApp
		if err := c.op.Client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "api"}, &app); err != nil {
			t.Fatal(err)
		}
		want := tenancy.PolicyName(c.name, "shop", "api")
		if app.Status.PolicyName != want || app.Status.RoleName != want {
			t.Fatalf("%s: status names %q/%q, want %q", c.name, app.Status.PolicyName, app.Status.RoleName, want)
		}
		// The app's workload logs in through its cluster's mount.
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}}
		if err := c.op.Client.Create(context.Background(), sa); err != nil {
			t.Fatal(err)
		}
		jwt, err := harness.ServiceAccountToken(context.Background(), c.op.Config, "shop", "api")
		if err != nil {
			t.Fatal(err)
		}
		login, err := unauthenticated(t).Logical().Write("auth/"+c.mount+"/login", map[string]any{"role": want, "jwt": jwt})
		if err != nil {
			t.Fatalf("%s: workload login with role %s: %v", c.name, want, err)
		}
		harness.KeepSecret(login.Auth.ClientToken)
		if pols := login.Auth.TokenPolicies; !slices.Contains(pols, want) {
			t.Fatalf("%s: workload token has policies %v, want %s", c.name, pols, want)
		}
	}
	state := vaultState(t, mounts...)
	for _, k := range []string{"policy app-east.shop.api", "policy app-west.shop.api", "role kubernetes-east/app-east.shop.api", "role kubernetes-west/app-west.shop.api"} {
		if _, ok := state[k]; !ok {
			t.Fatalf("Vault lacks %s: %v", k, slices.Collect(maps.Keys(state)))
		}
	}

	before := vaultState(t, mounts...)
	awaitSweeps(t, 3)
	if diff := changed(before, vaultState(t, mounts...)); len(diff) > 0 {
		t.Fatalf("the sweeps changed Vault: %v", diff)
	}
	west.deleteApp(t, client.ObjectKey{Namespace: "shop", Name: "api"})
	want := []string{"removed policy app-west.shop.api", "removed role kubernetes-west/app-west.shop.api"}
	if diff := changed(before, vaultState(t, mounts...)); !sameSet(diff, want) {
		t.Fatalf("west's deletion changed Vault by %v, want %v", diff, want)
	}
}

func unauthenticated(t *testing.T) *vaultapi.Client {
	t.Helper()
	cfg := vaultapi.DefaultConfig()
	cfg.Address = vaultServer.Addr
	c, err := vaultapi.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.ClearToken()
	return c
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}
