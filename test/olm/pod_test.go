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

// The manager in the place of the operator's pod: what a pod would be given,
// and how to tell which pod OLM's Deployment settled on.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// startManager runs the manager in the place of the pod of the Deployment
// OLM made for csv (its Subscription's config env applied).
func (e *env) startManager(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	e.startManagerBinary(t, csv, "")
}

// startManagerBinary is startManager with the manager binary of another
// release (the current code's when "").
func (e *env) startManagerBinary(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion, binary string) {
	t.Helper()
	var sub operatorsv1alpha1.Subscription
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: installNamespace, Name: packageName}, &sub); err != nil {
		t.Fatal(err)
	}
	var subEnv []corev1.EnvVar
	if sub.Spec.Config != nil {
		subEnv = sub.Spec.Config.Env
	}
	strategy := csv.Spec.InstallStrategy.StrategySpec
	depName := strategy.DeploymentSpecs[0].Name
	e.startPod(t, operatorPod{
		name: csv.Name, deployment: depName, service: depName + "-service", certSecret: depName + "-service-cert",
		serviceAccount: strategy.ClusterPermissions[0].ServiceAccountName, env: subEnv, binary: binary,
	})
}

// operatorPod is what an installer (OLM, Helm) made for the manager: the
// Deployment, the webhook Service in front of it, the Secret of its
// webhook certificate, its ServiceAccount, and the env the Deployment must
// carry before its pod counts.
type operatorPod struct {
	name, deployment, service, certSecret, serviceAccount string
	env                                                   []corev1.EnvVar
	// namespace is where the installer put it (installNamespace when empty).
	namespace string
	// binary is the manager of another release; the current code's when
	// empty.
	binary string
}

// startPod runs the manager binary on this machine in the place of the
// pod of the installer's Deployment, as that pod would run: the
// container's args and env, the webhook certificate from its Secret, a
// ServiceAccount token as the kubelet would mount it (the manager logs in
// to Vault with it), and the API access of the installer's ServiceAccount
// (impersonated). It listens on the pod's IP, which the harness routes to
// this machine; the API server calls the webhooks there.
func (e *env) startPod(t *testing.T, p operatorPod) {
	t.Helper()
	ctx := context.Background()
	sa := p.serviceAccount
	ns := p.namespace
	if ns == "" {
		ns = installNamespace
	}
	dir, err := os.MkdirTemp(e.dir, p.name+"-")
	if err != nil {
		t.Fatal(err)
	}
	dep, pod := waitPod(t, e.c, client.ObjectKey{Namespace: ns, Name: p.deployment}, p.service, p.env)

	var cert corev1.Secret
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: p.certSecret}, &cert); err != nil {
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
	token, err := harness.ServiceAccountToken(ctx, e.cluster.Config, ns, sa)
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
		auth.Impersonate = "system:serviceaccount:" + ns + ":" + sa
		auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	asSA := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, asSA); err != nil {
		t.Fatal(err)
	}

	container := dep.Spec.Template.Spec.Containers[0]
	args := []string{"--kubeconfig=" + asSA, "--webhook-cert-path=" + certDir, "--vault-service-account-token-path=" + tokenPath}
	for _, a := range container.Args {
		if strings.HasPrefix(a, "--webhook-cert-path=") {
			continue // the Secret's mount in the pod: certDir here
		}
		// ":8081" in a pod is every address of the pod: here, its IP.
		if name, port, ok := strings.Cut(a, "=:"); ok {
			a = name + "=" + pod.Status.PodIP + ":" + port
		}
		args = append(args, a)
	}
	// This cluster's kube-controller-manager runs no storage-version
	// migrator: run here, it took up no StorageVersionMigration within a
	// minute (it needs the garbage collector's view of every API, and
	// nothing serves OLM's packageserver API here: the likely cause). The
	// manager (auto, as the CSV deploys it) falls back to its own rewrites
	// after waiting; here it waits 5 s, not 2 minutes. The built-in path
	// is proven in test/integration/migration.
	bin := p.binary
	if bin == "" {
		bin = managerBinary(t)
		args = append(args, "--builtin-migration-start-timeout=5s")
	}
	// Nothing of Vault from this test's environment: the pod has only
	// what the Deployment gives it.
	env := []string{"VAULT_ADDR=", "VAULT_TOKEN="}
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
	e.manager, err = e.cluster.Start("manager-"+p.name, env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	e.managers = append(e.managers, e.manager)
	e.secrets = append(e.secrets, token)
	// Ready once its webhook server serves (/readyz), as the kubelet's
	// readiness probe waits: the API server calls the webhooks at once.
	readyz := "http://" + pod.Status.PodIP + ":8081/readyz"
	harness.Eventually(t, time.Minute, func() error {
		if e.manager.Exited() {
			t.Fatalf("the manager exited:\n%s", e.manager.LogTail(30))
		}
		resp, err := http.Get(readyz)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s\n%s", readyz, resp.Status, e.manager.LogTail(10))
		}
		return nil
	})
	t.Logf("manager for %s runs as %s at pod IP %s", p.name, sa, pod.Status.PodIP)
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

// waitPod waits until the Deployment is as OLM means it to be — the
// Subscription's config env applied, rolled out to one running pod — and the
// webhook Service's EndpointSlice holds that pod's IP as its one ready
// endpoint (where the API server calls the webhooks); it returns both. OLM
// updates the Deployment several times after creating it (a slow machine
// saw a first generation without the Subscription's VAULT_ADDR), so neither
// a first read nor a pod seen once is enough.
func waitPod(t *testing.T, c client.Client, key client.ObjectKey, service string, wantEnv []corev1.EnvVar) (*appsv1.Deployment, *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var dep appsv1.Deployment
		var pods corev1.PodList
		var endpointSlices discoveryv1.EndpointSliceList
		_ = c.Get(ctx, key, &dep)
		if dep.Spec.Selector != nil {
			_ = c.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels))
		}
		_ = c.List(ctx, &endpointSlices, client.InNamespace(key.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: service})
		var running []corev1.Pod
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.PodIP != "" && p.Status.Phase == corev1.PodRunning {
				running = append(running, p)
			}
		}
		var endpoints []string
		for _, sl := range endpointSlices.Items {
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					endpoints = append(endpoints, ep.Addresses...)
				}
			}
		}
		configured := len(dep.Spec.Template.Spec.Containers) > 0
		for _, v := range wantEnv {
			configured = configured && slices.Contains(dep.Spec.Template.Spec.Containers[0].Env, v)
		}
		st := dep.Status
		settled := dep.Generation == st.ObservedGeneration && st.Replicas == 1 && st.UpdatedReplicas == 1 && st.AvailableReplicas == 1
		if configured && settled && len(running) == 1 && len(endpoints) == 1 && endpoints[0] == running[0].Status.PodIP {
			return &dep, &running[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("Deployment %s not as OLM means it behind Service %s: Subscription env applied %v, status %+v, %d running pods, ready endpoints %v",
				key, service, configured, st, len(running), endpoints)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
