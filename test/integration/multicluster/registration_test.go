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

package multicluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// sharedServer is the VaultServer "shared" of a cluster on the suite's
// Vault: its own Kubernetes mount, the cluster's name and prefix, KV path
// and one KV template granting namespace shop read.
func (c *cluster) sharedServer(t *testing.T, name, prefix, kvPath, template string) *vaultv1beta1.VaultServer {
	t.Helper()
	s := vaultServerAt("shared", vaultServer.Addr, c.mount)
	s.Spec.Cluster, s.Spec.NamePrefix, s.Spec.KVPath = name, prefix, kvPath
	s.Spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
		{Template: template, Capabilities: []vaultv1beta1.Capability{"read"}}}}}
	if err := c.op.Client.Create(context.Background(), s); err != nil {
		t.Fatalf("%s: create VaultServer: %v", c.name, err)
	}
	return s
}

// serverApp creates VaultApp shop/<name> on the VaultServer "shared",
// reading its KV path <name>/*, with a ServiceAccount of its name.
func (c *cluster) serverApp(t *testing.T, name string) client.ObjectKey {
	t.Helper()
	if err := c.op.Client.Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}}); err != nil {
		t.Fatal(err)
	}
	return c.serverAppAgain(t, name)
}

// serverCondition waits until the VaultServer "shared" has the condition
// with status and reason, and returns its message.
func (c *cluster) serverCondition(t *testing.T, typ string, status metav1.ConditionStatus, reason string) string {
	t.Helper()
	s := harness.WaitCondition(t, c.op, client.ObjectKey{Name: "shared"}, func(s *vaultv1beta1.VaultServer) []metav1.Condition { return s.Status.Conditions },
		typ, status, reason, 30*time.Second)
	return meta.FindStatusCondition(s.Status.Conditions, typ).Message
}

// recheck makes the VaultServer "shared" check its Vault now, as it does
// every five minutes: its spec changes (a second grant of the same).
func (c *cluster) recheck(t *testing.T) {
	t.Helper()
	// The operator writes the status meanwhile (a recount): read again.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var s vaultv1beta1.VaultServer
		if err := c.op.Client.Get(context.Background(), client.ObjectKey{Name: "shared"}, &s); err != nil {
			return err
		}
		s.Spec.Access = append(s.Spec.Access, s.Spec.Access[0])
		return c.op.Client.Update(context.Background(), &s)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// workload logs in as the VaultApp's ServiceAccount through the cluster's
// mount, with the role its status names.
func (c *cluster) workload(t *testing.T, key client.ObjectKey) *vaultapi.Client {
	t.Helper()
	var app vaultv1beta1.VaultApp
	if err := c.op.Client.Get(context.Background(), key, &app); err != nil {
		t.Fatal(err)
	}
	jwt, err := harness.ServiceAccountToken(context.Background(), c.op.Config, key.Namespace, key.Name)
	if err != nil {
		t.Fatal(err)
	}
	w := unauthenticated(t)
	login, err := w.Logical().Write("auth/"+c.mount+"/login", map[string]any{"role": app.Status.RoleName, "jwt": jwt})
	if err != nil {
		t.Fatalf("%s: workload login as %s: %v", c.name, app.Status.RoleName, err)
	}
	harness.KeepSecret(login.Auth.ClientToken)
	w.SetToken(login.Auth.ClientToken)
	return w
}

// readKV reads a KV version 2 secret's password as a client; "" and the
// error when refused.
func readKV(c *vaultapi.Client, path string) (string, error) {
	s, err := c.Logical().Read("secret/data/" + path)
	if err != nil || s == nil {
		return "", fmt.Errorf("read %s: %v", path, err)
	}
	data, _ := s.Data["data"].(map[string]any)
	password, _ := data["password"].(string)
	return password, nil
}

// Two clusters on one KV mount: with kvPath {cluster}/{namespace} each
// namespace shop has its own secrets, and the other cluster's workload is
// refused them; laid out by namespace alone, both clusters' workloads read
// the same secret, and both VaultServers say KVShared, naming the other.
func TestClustersOnOneKVMount(t *testing.T) {
	ctx := context.Background()
	a, b := startCluster(t, "kva", "kva"), startCluster(t, "kvb", "kvb")
	admin, err := vaultServer.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	apps := map[*cluster]client.ObjectKey{}
	for _, c := range []*cluster{a, b} {
		c.sharedServer(t, c.name, c.name, "{cluster}/{namespace}", "secret/data/{cluster}/{namespace}/*")
		c.serverCondition(t, vaultv1beta1.TypeRegistered, metav1.ConditionTrue, vaultv1beta1.ReasonRegistered)
		c.namespace(t, "shop")
		apps[c] = c.serverApp(t, "api")
		c.wait(t, apps[c], metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
		secret := "kv-of-" + c.name
		harness.KeepSecret(secret)
		if _, err := admin.Logical().Write("secret/data/"+c.name+"/shop/api/db", map[string]any{"data": map[string]any{"password": secret}}); err != nil {
			t.Fatal(err)
		}
		var app vaultv1beta1.VaultApp
		if err := c.op.Client.Get(ctx, apps[c], &app); err != nil {
			t.Fatal(err)
		}
		if app.Status.Vault == nil || app.Status.Vault.KVPrefix != c.name+"/shop/" {
			t.Fatalf("%s: status.vault %+v, want kvPrefix %s/shop/", c.name, app.Status.Vault, c.name)
		}
	}
	for _, c := range []*cluster{a, b} {
		c.serverCondition(t, vaultv1beta1.TypeIsolated, metav1.ConditionTrue, vaultv1beta1.ReasonIsolated)
	}
	wa, wb := a.workload(t, apps[a]), b.workload(t, apps[b])
	if got, err := readKV(wa, "kva/shop/api/db"); err != nil || got != "kv-of-kva" {
		t.Fatalf("A's workload reads its own secret: %v", err)
	}
	if _, err := readKV(wb, "kva/shop/api/db"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("B's shop/api reads A's shop/api secret: %v; want refused", err)
	}
	if got, err := readKV(wb, "kvb/shop/api/db"); err != nil || got != "kv-of-kvb" {
		t.Fatalf("B's workload reads its own secret: %v", err)
	}

	// Laid out by namespace alone on both: the same secret for both
	// workloads, and each VaultServer names the other.
	for _, c := range []*cluster{a, b} {
		var s vaultv1beta1.VaultServer
		if err := c.op.Client.Get(ctx, client.ObjectKey{Name: "shared"}, &s); err != nil {
			t.Fatal(err)
		}
		s.Spec.KVPath, s.Spec.Access[0].Paths[0].Template = "{namespace}", "secret/data/{namespace}/*"
		if err := c.op.Client.Update(ctx, &s); err != nil {
			t.Fatal(err)
		}
	}
	b.serverCondition(t, vaultv1beta1.TypeIsolated, metav1.ConditionFalse, vaultv1beta1.ReasonKVShared)
	a.recheck(t) // A checked before B had moved
	for _, pair := range [][2]*cluster{{a, b}, {b, a}} {
		msg := pair[0].serverCondition(t, vaultv1beta1.TypeIsolated, metav1.ConditionFalse, vaultv1beta1.ReasonKVShared)
		if !strings.Contains(msg, "cluster "+pair[1].name+" keeps its namespaces' secrets at paths of KV mount secret that overlap this cluster's") {
			t.Fatalf("%s: KVShared says %q; want cluster %s named", pair[0].name, msg, pair[1].name)
		}
		// Warned, and still Ready: sharing may be meant.
		pair[0].serverCondition(t, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
		pair[0].op.WaitEvent(t, "", "shared", vaultv1beta1.ReasonKVShared)
	}
	const shared = "kv-of-shop-in-both"
	harness.KeepSecret(shared)
	if _, err := admin.Logical().Write("secret/data/shop/api/db", map[string]any{"data": map[string]any{"password": shared}}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() error {
		for _, c := range []*cluster{a, b} {
			if got, err := readKV(c.workload(t, apps[c]), "shop/api/db"); err != nil || got != shared {
				return fmt.Errorf("%s's workload does not read the shared path yet: %v", c.name, err)
			}
		}
		return nil
	})
}

// Two clusters given one name (a copied VaultServer): both say
// ClusterNameClash, naming the other's ID; neither adopts, repairs or
// sweeps what the other wrote; a VaultApp of a name the other holds says
// NotOwned. Renamed, the second cluster is registered and writes its own.
func TestTwoClustersUnderOneName(t *testing.T) {
	ctx := context.Background()
	a, b := startCluster(t, "twina", "tw"), startCluster(t, "twinb", "tw")
	mounts := []string{a.mount, b.mount}
	a.sharedServer(t, "twin", "tw", "", "secret/data/{namespace}/*")
	a.serverCondition(t, vaultv1beta1.TypeRegistered, metav1.ConditionTrue, vaultv1beta1.ReasonRegistered)
	a.namespace(t, "shop")
	for _, name := range []string{"api", "only-a"} {
		a.wait(t, a.serverApp(t, name), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	}

	b.sharedServer(t, "twin", "tw", "", "secret/data/{namespace}/*")
	msg := b.serverCondition(t, vaultv1beta1.TypeRegistered, metav1.ConditionFalse, vaultv1beta1.ReasonClusterNameClash)
	if !strings.Contains(msg, "registered in this Vault by another cluster (id "+a.id+"; this one is "+b.id+")") {
		t.Fatalf("B's ClusterNameClash says %q; want both IDs", msg)
	}
	b.serverCondition(t, vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonClusterNameClash)
	b.op.WaitEvent(t, "", "shared", vaultv1beta1.ReasonClusterNameClash)
	a.recheck(t) // its next check
	if msg := a.serverCondition(t, vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonClusterNameClash); !strings.Contains(msg, "(id "+b.id+")") {
		t.Fatalf("A's ClusterNameClash says %q; want B's ID", msg)
	}

	b.namespace(t, "shop")
	if msg := b.wait(t, b.serverApp(t, "api"), metav1.ConditionFalse, vaultv1beta1.ReasonNotOwned); !strings.Contains(msg, "belongs to another cluster given this cluster's name (id "+a.id) {
		t.Fatalf("B's shop/api says %q; want A's policy named as a namesake's", msg)
	}
	b.wait(t, b.serverApp(t, "only-b"), metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	// Each side's sweep finds the other's policies with no VaultApp of its
	// own: none goes, nor does any change hands.
	before := vaultState(t, mounts...)
	for _, name := range []string{"app-tw.shop.api", "app-tw.shop.only-a", "app-tw.shop.only-b"} {
		if _, ok := before["policy "+name]; !ok {
			t.Fatalf("Vault lacks %s", name)
		}
	}
	for name, id := range map[string]string{"app-tw.shop.api": a.id, "app-tw.shop.only-a": a.id, "app-tw.shop.only-b": b.id} {
		if got := vaultclient.MarkOf(before["policy "+name]).Owner.ClusterID; got != id {
			t.Fatalf("%s marked with cluster ID %q, want %q", name, got, id)
		}
	}
	awaitSweeps(t, 3)
	if diff := changed(before, vaultState(t, mounts...)); len(diff) > 0 {
		t.Fatalf("two clusters under one name changed each other's policies: %v", diff)
	}

	// Renamed, B is registered under its own name, and A no longer hears
	// of it once the claim is stale (three checks; not waited for here).
	var s vaultv1beta1.VaultServer
	if err := b.op.Client.Get(ctx, client.ObjectKey{Name: "shared"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Spec.Cluster = "twin-b"
	if err := b.op.Client.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	b.serverCondition(t, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonConnected)
}
