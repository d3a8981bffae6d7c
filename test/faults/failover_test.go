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

// Package faults proves the operator keeps its promises under faults that
// users meet with the manager running as a pod: the built manager binary
// runs as its own process (two of them where it matters) against the real
// API server and Vault, with a few hundred objects, behind counting proxies.
package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	operatorNamespace = "vko-system"
	operatorSA        = "vko-manager"
	objects           = 200
)

// replica is one manager process with its own proxy in front of Vault, so
// that every request to Vault is known by the replica that sent it.
type replica struct {
	name    string
	proxy   *harness.CountingProxy
	manager *harness.Manager
}

// R4: two replicas with leader election; the leader is SIGKILLed while 200
// VaultApps are being updated. The other takes over within 20 s (the lease
// is not handed back: it must expire), only one replica ever writes to
// Vault, and every object converges to its latest spec.
func TestLeaderKilledTheStandbyTakesOver(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	c, cluster, vault, tokenPath := w.c, w.cluster, w.vault, w.tokenPath

	// Each replica serves the webhooks on a port of its own; a Service on
	// the port the API server calls forwards to whichever answers.
	wh := cluster.Env.WebhookInstallOptions
	svc, err := harness.StartService(fmt.Sprintf("%s:%d", wh.LocalServingHost, wh.LocalServingPort))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	var replicas []*replica
	for _, name := range []string{"replica-a", "replica-b"} {
		proxy, err := harness.StartCountingProxy(vault.Addr, harness.ClassifyVault)
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		m, err := cluster.StartManager(ctx, name, []string{"VAULT_ADDR=" + proxy.URL},
			"--operator-namespace="+operatorNamespace, "--vault-service-account-token-path="+tokenPath,
			harness.WebhookPortFree)
		if err != nil {
			t.Fatal(err)
		}
		svc.Add(strings.TrimPrefix(m.WebhookURL, "https://"))
		defer m.Stop()
		replicas = append(replicas, &replica{name: name, proxy: proxy, manager: m})
	}

	// 200 VaultApps, all Ready: the leader is the replica that wrote them.
	for i := range objects {
		if err := c.Create(ctx, vaultApp(appName(i), "db/*")); err != nil {
			t.Fatal(err)
		}
	}
	waitAll(t, c, "db/*", objects, time.Minute)
	leader, standby := replicas[0], replicas[1]
	if leader.proxy.Counts()["write"] == 0 {
		leader, standby = standby, leader
	}
	if w := standby.proxy.Counts()["write"]; w != 0 || leader.proxy.Counts()["write"] < 2*objects {
		t.Fatalf("writes: %s %d, %s %d; want one replica to have written every policy and role, the other nothing",
			leader.name, leader.proxy.Counts()["write"], standby.name, w)
	}
	holder := leaseHolder(c)

	// Update every spec, and kill the leader while it works through them.
	go func() {
		// An update whose webhook call was cut by the kill is refused; like
		// a client would, it is sent again.
		always := func(error) bool { return true }
		for i := range objects {
			_ = retry.OnError(wait.Backoff{Steps: 30, Duration: 100 * time.Millisecond, Factor: 1.5, Cap: 2 * time.Second}, always, func() error {
				app := &vaultv1beta1.VaultApp{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(vaultApp(appName(i), "")), app); err != nil {
					return err
				}
				app.Spec.Policy.Rules[0].Path = "cache/*"
				return c.Update(ctx, app)
			})
		}
	}()
	for leader.proxy.Counts()["write"] < 2*objects+20 {
		time.Sleep(20 * time.Millisecond)
	}
	leader.manager.Kill()
	killed := time.Now()
	standbyBefore := standby.proxy.Counts()["write"]

	var takeover time.Duration
	for {
		if h := leaseHolder(c); h != holder && h != "" {
			takeover = time.Since(killed)
			break
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("no takeover 30 s after the leader was killed; standby log:\n%s", standby.manager.LogTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if takeover > 20*time.Second {
		t.Errorf("the standby took over %s after the leader was killed, want within 20 s", takeover.Round(100*time.Millisecond))
	}
	if standbyBefore != 0 {
		t.Errorf("the standby wrote %d times to Vault while the leader lived: two writers", standbyBefore)
	}
	waitAll(t, c, "cache/*", objects, 30*time.Second+takeover)
	// Vault holds the latest spec of every object.
	admin, err := vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	for i := range objects {
		name := tenancy.PolicyName("", "team", vaultApp(appName(i), "").Name)
		text, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil || !strings.Contains(text, "secret/data/team/cache/*") || strings.Contains(text, "team/db/*") {
			t.Fatalf("policy %s after the failover: %v\n%s", name, err, text)
		}
	}
	t.Logf("R4: the leader was killed with %d writes done; the standby took over after %s and wrote %d times; all %d objects in step",
		leader.proxy.Counts()["write"], takeover.Round(100*time.Millisecond), standby.proxy.Counts()["write"], objects)
}

func appName(i int) string { return fmt.Sprintf("app-%03d", i) }

func vaultApp(name, path string) *vaultv1beta1.VaultApp {
	return &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{
			{Path: path, Capabilities: []vaultv1beta1.Capability{vaultv1beta1.CapabilityRead}}}}},
	}
}

// waitAll waits until n VaultApps are Ready for their current spec, whose
// only path is path.
func waitAll(t *testing.T, c client.Client, path string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var list vaultv1beta1.VaultAppList
		if err := c.List(context.Background(), &list, client.InNamespace("team")); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, app := range list.Items {
			if app.Spec.Policy.Rules[0].Path == path && harness.ReadyFor(app.Status.Conditions, app.Generation) {
				ready++
			}
		}
		if ready == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d VaultApps Ready for %s after %s", ready, n, path, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// leaseHolder is who holds the manager's Lease ("" for nobody, or unread).
func leaseHolder(c client.Client) string {
	holder, _ := harness.LeaderLeaseHolder(context.Background(), c, operatorNamespace)
	return holder
}
