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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// runFirstManager does the admins' part, runs the manager in the place of
// the pod OLM deployed, and applies the samples of both groups in both
// versions: the webhooks answer, and every sample becomes Ready against the
// real Vault and Keycloak.
func (e *env) runFirstManager(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	ctx := context.Background()
	sa := csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].ServiceAccountName
	if err := harness.AdminSetup(ctx, e.c, e.cluster.Config, e.vault, e.keycloak, installNamespace, "vault-keycloak-operator-olm"); err != nil {
		t.Fatal(err)
	}
	if err := e.vault.AllowOperator(ctx, installNamespace, sa); err != nil {
		t.Fatal(err)
	}
	e.startManager(t, csv)

	samples, err := harness.RenderSamples(e.dir, e.keycloak.URL)
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	// Applied as the admin; the webhooks (served by the manager) default
	// and validate, the conversion webhook serves the v1alpha1 samples.
	if out, err := exec.Command(kubectl, "--kubeconfig", e.cluster.Kubeconfig, "apply", "-n", harness.SamplesNamespace, "-f", samples).CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply the samples: %v\n%s\nmanager log:\n%s", err, out, e.manager.LogTail(30))
	}
	e.waitSamplesReady(t)

	// The validating webhook answers through OLM's configuration, with its
	// own message, in the terms of the version the author wrote.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "vault.exemple.com/v1alpha1", "kind": "VaultApp",
		"metadata": map[string]any{"name": "too-much", "namespace": harness.SamplesNamespace},
		"spec":     map[string]any{"vaultPolicy": "read-write", "secretPaths": []any{"db"}},
	}}
	err = e.c.Create(ctx, bad)
	const want = `spec.vaultPolicy: Forbidden: create, update, patch, delete not allowed in namespace "default"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a v1alpha1 VaultApp asking for more than the namespace may use: %v; want the webhook's %q", err, want)
	}

	// What a user sees: the policy and role in Vault, the Secret in place,
	// and the leader's Lease (the CSV grants leases, and the manager uses it).
	admin, err := e.vault.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"app.default.shop-api", "app.default.legacy-api"} {
		if policy, err := admin.Sys().GetPolicyWithContext(ctx, name); err != nil || policy == "" {
			t.Errorf("Vault policy %s: %q, %v", name, policy, err)
		}
		if role, err := admin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+name); err != nil || role == nil {
			t.Errorf("Vault role %s: %v, %v", name, role, err)
		}
	}
	kcAdmin, err := e.keycloak.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gitea, err := kcAdmin.ClientSecret(ctx, "operator", "gitea")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gitea-secret-creds", "gitea-legacy-creds"} {
		var s corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: harness.SamplesNamespace, Name: name}, &s); err != nil {
			t.Errorf("Secret %s: %v", name, err)
		}
		if !slices.ContainsFunc(slices.Collect(maps.Values(s.Data)), func(v []byte) bool { return string(v) == gitea }) {
			t.Errorf("Secret %s does not hold the gitea client's secret", name)
		}
	}
	var creds corev1.Secret
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "prod-keycloak-credentials"}, &creds); err != nil {
		t.Fatal(err)
	}
	e.secrets = append(e.secrets, gitea, string(creds.Data["clientSecret"]))
	var lease coordinationv1.Lease
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: "vault-keycloak-operator.carbogame.com"}, &lease); err != nil {
		t.Errorf("leader election Lease: %v", err)
	}
}

// checkLogs looks for every secret value the managers handled — the
// ServiceAccount tokens they logged in to Vault with, the operator's
// Keycloak credentials, the client secret they copied — in their logs, as
// the released binary writes them.
func (e *env) checkLogs(t *testing.T) {
	if len(e.managers) == 0 || len(e.secrets) == 0 {
		t.Fatal("no manager ran, or no secret was gathered: nothing to look for")
	}
	for _, m := range e.managers {
		log := m.Log()
		if !strings.Contains(log, "starting manager") {
			t.Errorf("a manager's log lacks its start line: not the log looked for")
		}
		for _, s := range e.secrets {
			if s == "" || strings.Contains(log, s) {
				t.Errorf("a manager's log holds a secret value (%d characters), or the value is empty", len(s))
			}
		}
	}
}

// waitSamplesReady waits for every sample's condition, with the manager's
// log when one does not get there.
func (e *env) waitSamplesReady(t *testing.T) {
	t.Helper()
	for _, s := range harness.Samples {
		if err := s.WaitReady(context.Background(), e.c, 2*time.Minute); err != nil {
			t.Fatalf("%v\nmanager log:\n%s", err, e.manager.LogTail(40))
		}
	}
}

// startManager runs the manager binary on this machine in the place of the
// pod of the Deployment OLM made, as that pod would run: the container's
// args and env (the Subscription's VAULT_ADDR among them), the webhook
// certificate OLM put in its Secret, a ServiceAccount token as the kubelet
// would mount it (the manager logs in to Vault with it), and the API
// access of the ServiceAccount OLM created (impersonated). It listens on the
// pod's IP, which the harness routes to this machine; the API server calls
// the webhooks there.
func (e *env) startManager(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	ctx := context.Background()
	strategy := csv.Spec.InstallStrategy.StrategySpec
	depName, sa := strategy.DeploymentSpecs[0].Name, strategy.ClusterPermissions[0].ServiceAccountName
	dir, err := os.MkdirTemp(e.dir, csv.Name+"-")
	if err != nil {
		t.Fatal(err)
	}

	var dep appsv1.Deployment
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: depName}, &dep); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(t, e.c, &dep, depName+"-service")

	var cert corev1.Secret
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: depName + "-service-cert"}, &cert); err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(certDir, k), cert.Data[k], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	token, err := harness.ServiceAccountToken(ctx, e.cluster.Config, installNamespace, sa)
	if err != nil {
		t.Fatal(err)
	}
	tokenPath := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenPath, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := clientcmd.LoadFromFile(e.cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range kubeconfig.AuthInfos {
		auth.Impersonate = "system:serviceaccount:" + installNamespace + ":" + sa
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + installNamespace, "system:authenticated"}
	}
	asSA := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, asSA); err != nil {
		t.Fatal(err)
	}

	container := dep.Spec.Template.Spec.Containers[0]
	args := []string{"--kubeconfig=" + asSA, "--webhook-cert-path=" + certDir, "--vault-service-account-token-path=" + tokenPath}
	for _, a := range container.Args {
		// ":8081" in a pod is every address of the pod: here, its IP.
		if name, port, ok := strings.Cut(a, "=:"); ok {
			a = name + "=" + pod.Status.PodIP + ":" + port
		}
		args = append(args, a)
	}
	// No VAULT_TOKEN from this test's environment: the pod has none.
	env := []string{"VAULT_TOKEN="}
	for _, v := range container.Env {
		switch {
		case v.ValueFrom != nil && v.ValueFrom.FieldRef != nil && v.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, v.Name+"="+pod.Namespace)
		case v.ValueFrom == nil:
			env = append(env, v.Name+"="+v.Value)
		default:
			t.Fatalf("container env %s: a source this test cannot stand in for", v.Name)
		}
	}
	e.manager, err = e.cluster.Start("manager-"+csv.Name, env, managerBinary(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	e.managers = append(e.managers, e.manager)
	e.secrets = append(e.secrets, token)
	t.Logf("manager for %s runs as %s at pod IP %s", csv.Name, sa, pod.Status.PodIP)
}

// managerBinary builds the manager once per test run.
var managerPath string

func managerBinary(t *testing.T) string {
	t.Helper()
	if managerPath != "" {
		return managerPath
	}
	dir, err := os.MkdirTemp("", "vko-olm-manager-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd")
	build.Dir = harness.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the manager: %v\n%s", err, out)
	}
	managerPath = bin
	return bin
}

// waitPod waits until the Deployment has settled on one running pod and
// the webhook Service's EndpointSlice holds that pod's IP as its one ready
// endpoint (where the API server calls the webhooks), and returns the pod.
// OLM may roll the Deployment again right after installing it (seen in CI:
// the endpoint moved to a second pod), so a pod seen once is not enough.
func waitPod(t *testing.T, c client.Client, dep *appsv1.Deployment, service string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var current appsv1.Deployment
		var pods corev1.PodList
		var slices discoveryv1.EndpointSliceList
		_ = c.Get(ctx, client.ObjectKeyFromObject(dep), &current)
		_ = c.List(ctx, &pods, client.InNamespace(dep.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels))
		_ = c.List(ctx, &slices, client.InNamespace(dep.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: service})
		var running []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.PodIP != "" && p.Status.Phase == corev1.PodRunning {
				running = append(running, p)
			}
		}
		var endpoints []string
		for _, sl := range slices.Items {
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					endpoints = append(endpoints, ep.Addresses...)
				}
			}
		}
		st := current.Status
		settled := current.Generation == st.ObservedGeneration && st.Replicas == 1 && st.UpdatedReplicas == 1 && st.AvailableReplicas == 1
		if settled && len(running) == 1 && len(endpoints) == 1 && endpoints[0] == running[0].Status.PodIP {
			return &running[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("Deployment %s has not settled on one pod behind Service %s: status %+v, %d running pods, ready endpoints %v",
				dep.Name, service, st, len(running), endpoints)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
