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

package olm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The sharded release: shards Deployments of shardReplicas pods each.
const (
	shards        = 3
	shardReplicas = 2
)

// helmShards upgrades the chart's release from one Deployment to three
// shards of two replicas (helm upgrade --set shards=3): the one-Deployment
// manager stops with its pod, a manager runs in the place of each of the six
// pods, and VaultApps in namespaces of each shard's share become Ready
// (each shard reconciles its share alone, so every one of them ran). Then
// shard 1's leader is killed with its pod: its standby takes the Lease and
// the shard's next VaultApp gets Ready.
func (e *env) helmShards(t *testing.T, run func(*testing.T, ...string) (string, error), chart, kubeconfig string) {
	ctx := context.Background()
	single := e.manager
	out, err := run(t, "upgrade", "vko", chart, "--namespace", installNamespace, kubeconfig, "--reuse-values",
		"--set", "shards="+strconv.Itoa(shards), "--set", "replicas="+strconv.Itoa(shardReplicas))
	if err != nil {
		t.Fatalf("helm upgrade to %d shards: %v\n%s", shards, err, out)
	}
	// Its Deployment is gone: the kubelet would stop its container, and the
	// garbage collector (not run here) remove its ReplicaSet and pod.
	single.Stop()
	removeOrphans(t, e.c, chartDeployment)

	managers := make([][]*harness.Process, shards)
	pods := func(i int) operatorPod {
		return operatorPod{name: fmt.Sprintf("helm-shard-%d", i), deployment: fmt.Sprintf("%s-shard-%d", chartDeployment, i),
			service: chartWebhookService, certSecret: chartCertSecret, serviceAccount: chartServiceAccount,
			replicas: shardReplicas, endpoints: shards * shardReplicas}
	}
	for i := range shards {
		managers[i] = e.startPods(t, pods(i))
	}
	for i, m := range managers {
		for _, p := range m {
			if log := p.Log(); !strings.Contains(log, fmt.Sprintf(`"shard":"%d/%d"`, i, shards)) {
				t.Errorf("a manager of shard %d's Deployment does not say it serves shard %d/%d:\n%s", i, i, shards, p.LogTail(20))
			}
		}
	}

	// A namespace in each shard's share, granted by the VaultServer.
	namespaces := shardNamespaces(t, shards)
	grant(t, e.c, namespaces)
	for _, ns := range namespaces {
		createShardApp(t, e.c, ns, "api")
	}
	for _, ns := range namespaces {
		e.waitShardApp(t, ns, "api")
	}
	// Each VaultApp written to Vault by its own shard's managers alone.
	for i, ns := range namespaces {
		for j := range shards {
			wrote := slices.ContainsFunc(managers[j], func(p *harness.Process) bool { return wroteToVault(p, "app."+ns+".api") })
			if wrote != (i == j) {
				t.Errorf("VaultApp %s/api (shard %d's): shard %d's managers wrote it to Vault: %v", ns, i, j, wrote)
			}
		}
	}

	// Shard 1's leader dies with its pod, as a node would take it.
	lease := fmt.Sprintf("%s-shard-1-of-%d", manager.LeaderElectionBase, shards)
	// client-go's leader election logs it (through controller-runtime's
	// logger, or klog's).
	acquired := func(p *harness.Process) bool {
		return logged(p, "Successfully acquired lease", installNamespace+"/"+lease)
	}
	leader := slices.IndexFunc(managers[1], acquired)
	if leader < 0 {
		t.Fatalf("neither manager of shard 1 says it acquired %s", lease)
	}
	before := leaseHolder(t, e.c, lease)
	dep, running := waitPods(t, e.c, client.ObjectKey{Namespace: installNamespace, Name: pods(1).deployment}, chartWebhookService, nil, shardReplicas, shards*shardReplicas)
	managers[1][leader].Kill()
	// The leader's pod, by its name (startPods names each manager after it).
	killed := slices.IndexFunc(running, func(p corev1.Pod) bool { return managers[1][leader].Name() == "manager-"+p.Name })
	if killed < 0 {
		t.Fatalf("no pod of shard 1 is the leader's")
	}
	if err := e.c.Delete(ctx, &running[killed], client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	standby := managers[1][1-leader]
	harness.Eventually(t, time.Minute, func() error {
		if !acquired(standby) {
			return fmt.Errorf("shard 1's standby has not taken %s (holder %q before the kill)", lease, before)
		}
		return nil
	})
	if after := leaseHolder(t, e.c, lease); after == before {
		t.Errorf("Lease %s still held by %q, the killed leader", lease, after)
	}
	// The Deployment's new pod gets a manager, as the kubelet would start
	// it: a standby now (before the new VaultApp, so that every endpoint
	// of the webhook Service answers).
	served := []string{running[0].Name, running[1].Name}
	_, running = waitPods(t, e.c, client.ObjectKey{Namespace: installNamespace, Name: dep.Name}, chartWebhookService, nil, shardReplicas, shards*shardReplicas)
	for i := range running {
		if !slices.Contains(served, running[i].Name) {
			m := e.runManager(t, pods(1), running[i].Name, dep, &running[i])
			waitManagerReady(t, m, &running[i])
		}
	}
	createShardApp(t, e.c, namespaces[1], "after-failover")
	e.waitShardApp(t, namespaces[1], "after-failover")
}

// removeOrphans deletes the ReplicaSets of the gone Deployment named
// deployment, and their pods, as the garbage collector would.
func removeOrphans(t *testing.T, c client.Client, deployment string) {
	t.Helper()
	ctx := context.Background()
	var sets appsv1.ReplicaSetList
	if err := c.List(ctx, &sets, client.InNamespace(installNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, rs := range sets.Items {
		if !slices.ContainsFunc(rs.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "Deployment" && o.Name == deployment }) {
			continue
		}
		if err := c.Delete(ctx, &rs); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(installNamespace), client.MatchingLabels(rs.Spec.Selector.MatchLabels)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == rs.UID }) {
				if err := c.Delete(ctx, &p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// shardNamespaces are namespace names, the i-th in shard i's share of n.
func shardNamespaces(t *testing.T, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range n {
		s, err := shard.New(i, n)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; names[i] == ""; j++ {
			if j == 10000 {
				t.Fatalf("no name of shard-team-0…9999 in shard %d of %d", i, n)
			}
			if ns := fmt.Sprintf("shard-team-%d", j); s.Owns(ns) {
				names[i] = ns
			}
		}
	}
	return names
}

// grant creates the namespaces and adds them to the VaultServer sample's
// grant (the admin's part).
func grant(t *testing.T, c client.Client, namespaces []string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	server := &unstructured.Unstructured{}
	server.SetAPIVersion("vault.exemple.com/v1beta1")
	server.SetKind("VaultServer")
	if err := c.Get(ctx, client.ObjectKey{Name: harness.VaultServerSample}, server); err != nil {
		t.Fatal(err)
	}
	access, _, _ := unstructured.NestedSlice(server.Object, "spec", "access")
	entry := access[0].(map[string]any)
	for _, ns := range namespaces {
		entry["namespaces"] = append(entry["namespaces"].([]any), ns)
	}
	if err := unstructured.SetNestedSlice(server.Object, access, "spec", "access"); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(ctx, server); err != nil {
		t.Fatal(err)
	}
}

// createShardApp creates a VaultApp like the sample in ns (through the
// webhooks, which any of the shards' pods may serve).
func createShardApp(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "vault.exemple.com/v1beta1", "kind": "VaultApp",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"policy":         map[string]any{"rules": []any{map[string]any{"path": "db/*", "capabilities": []any{"read"}}}},
			"kubernetesAuth": map[string]any{"serviceAccounts": []any{name}},
		},
	}}
	if err := c.Create(context.Background(), app); err != nil {
		t.Fatalf("create VaultApp %s/%s: %v", ns, name, err)
	}
}

// waitShardApp waits for the VaultApp to be Ready and its policy to be in
// Vault.
func (e *env) waitShardApp(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	admin, err := e.vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 2*time.Minute, func() error {
		app := &unstructured.Unstructured{}
		app.SetAPIVersion("vault.exemple.com/v1beta1")
		app.SetKind("VaultApp")
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
			return err
		}
		conditions, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
		ready := slices.ContainsFunc(conditions, func(c any) bool {
			m := c.(map[string]any)
			return m["type"] == "Ready" && m["status"] == "True"
		})
		if !ready {
			return fmt.Errorf("VaultApp %s/%s not Ready: %v", ns, name, conditions)
		}
		policy := "app." + ns + "." + name
		if text, err := admin.Sys().GetPolicyWithContext(ctx, policy); err != nil || text == "" {
			return fmt.Errorf("Vault policy %s: %q, %v", policy, text, err)
		}
		return nil
	})
}

// wroteToVault says whether the manager logged writing policy (or its
// role) to Vault.
func wroteToVault(p *harness.Process, policy string) bool {
	return logged(p, `"msg":"wrote to Vault"`, `"name":"`+policy+`"`)
}

// logged says whether one line of the process's log holds every part.
func logged(p *harness.Process, parts ...string) bool {
	return slices.ContainsFunc(strings.Split(p.Log(), "\n"), func(line string) bool {
		return !slices.ContainsFunc(parts, func(part string) bool { return !strings.Contains(line, part) })
	})
}

// leaseHolder is who holds the Lease in the operator's namespace.
func leaseHolder(t *testing.T, c client.Client, name string) string {
	t.Helper()
	var lease coordinationv1.Lease
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: installNamespace, Name: name}, &lease); err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
