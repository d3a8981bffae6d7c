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
	// replicas is how many pods the Deployment runs (1 when 0); endpoints
	// how many ready endpoints the Service has in all (replicas when 0:
	// other Deployments behind it, as shards are, add theirs).
	replicas, endpoints int
	// addEnv is environment (NAME=value) added to the Deployment's, as a
	// Subscription's config would add it.
	addEnv []string
}

// ns is where the installer put the pod.
func (p operatorPod) ns() string {
	if p.namespace == "" {
		return installNamespace
	}
	return p.namespace
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
	e.startPods(t, p)
}

// startPods is startPod for each of the Deployment's pods; it returns
// their managers, each ready (serving the webhooks), in the pods' order.
func (e *env) startPods(t *testing.T, p operatorPod) []*harness.Process {
	t.Helper()
	ns := p.ns()
	dep, pods := waitPods(t, e.c, client.ObjectKey{Namespace: ns, Name: p.deployment}, p.service, p.env, max(p.replicas, 1), p.endpoints)
	var managers []*harness.Process
	for i := range pods {
		name := p.name
		if len(pods) > 1 {
			name = pods[i].Name
		}
		m := e.runManager(t, p, name, dep, &pods[i])
		waitManagerReady(t, m, &pods[i])
		managers = append(managers, m)
	}
	return managers
}

// runManager starts the manager of one pod of dep, as that pod would run
// it (startPod), without waiting for it to be ready.
func (e *env) runManager(t *testing.T, p operatorPod, name string, dep *appsv1.Deployment, pod *corev1.Pod) *harness.Process {
	t.Helper()
	ctx := context.Background()
	sa, ns := p.serviceAccount, pod.Namespace
	dir, err := os.MkdirTemp(e.dir, name+"-")
	if err != nil {
		t.Fatal(err)
	}
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
	if p.endpoints > 1 {
		// Several managers on this one machine (the pods of shards): each
		// serves the webhooks on its pod's IP. One alone serves them on
		// every address, as in its pod: during an OLM upgrade it answers
		// at the new pod's IP too, as the new pod would.
		args = append(args, "--webhook-host="+pod.Status.PodIP)
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
	env = append(env, p.addEnv...)
	m, err := e.cluster.Start("manager-"+name, env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	e.manager = m
	e.managers = append(e.managers, m)
	e.secrets = append(e.secrets, token)
	return m
}

// waitManagerReady waits until the manager of pod serves its webhooks
// (/readyz), as the kubelet's readiness probe waits: the API server calls
// the webhooks at once.
func waitManagerReady(t *testing.T, m *harness.Process, pod *corev1.Pod) {
	t.Helper()
	readyz := "http://" + pod.Status.PodIP + ":8081/readyz"
	harness.Eventually(t, time.Minute, func() error {
		if m.Exited() {
			t.Fatalf("the manager exited:\n%s", m.LogTail(30))
		}
		resp, err := http.Get(readyz)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s\n%s", readyz, resp.Status, m.LogTail(10))
		}
		return nil
	})
	t.Logf("manager of pod %s ready at %s", pod.Name, pod.Status.PodIP)
}

// waitRefused runs the manager of the installer's pod and waits for it to
// stop at its start, with a log that says want.
func (e *env) waitRefused(t *testing.T, p operatorPod, want string) {
	t.Helper()
	ns := p.ns()
	dep, pods := waitPods(t, e.c, client.ObjectKey{Namespace: ns, Name: p.deployment}, p.service, p.env, 1, 0)
	m := e.runManager(t, p, p.name+"-refused", dep, &pods[0])
	// Not a manager that ran: checkLogs looks at its log for secrets, not
	// for its start.
	e.managers = slices.DeleteFunc(e.managers, func(x *harness.Process) bool { return x == m })
	e.refused = append(e.refused, m)
	harness.Eventually(t, time.Minute, func() error {
		if !m.Exited() {
			return fmt.Errorf("the manager still runs:\n%s", m.LogTail(10))
		}
		return nil
	})
	if log := m.Log(); !strings.Contains(log, want) {
		t.Errorf("the manager stopped without saying %q:\n%s", want, m.LogTail(20))
	}
	t.Logf("the manager refused to start: %s", m.LogTail(1))
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

// waitPods waits until the Deployment is as the installer means it to be —
// the Subscription's config env applied, rolled out to replicas running
// pods — and the webhook Service's EndpointSlices hold those pods' IPs
// among endpoints ready endpoints in all (replicas when 0); it returns the
// Deployment and its pods. OLM updates the Deployment several times after
// creating it (a slow machine saw a first generation without the
// Subscription's VAULT_ADDR), so neither a first read nor a pod seen once
// is enough.
func waitPods(t *testing.T, c client.Client, key client.ObjectKey, service string, wantEnv []corev1.EnvVar, replicas, endpoints int) (*appsv1.Deployment, []corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	if endpoints == 0 {
		endpoints = replicas
	}
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
		var ready []string
		for _, sl := range endpointSlices.Items {
			for _, ep := range sl.Endpoints {
				if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					ready = append(ready, ep.Addresses...)
				}
			}
		}
		configured := len(dep.Spec.Template.Spec.Containers) > 0
		for _, v := range wantEnv {
			configured = configured && slices.Contains(dep.Spec.Template.Spec.Containers[0].Env, v)
		}
		st := dep.Status
		r := int32(replicas)
		settled := dep.Generation == st.ObservedGeneration && st.Replicas == r && st.UpdatedReplicas == r && st.AvailableReplicas == r
		served := len(running) == replicas && len(ready) == endpoints
		for _, p := range running {
			served = served && slices.Contains(ready, p.Status.PodIP)
		}
		if configured && settled && served {
			return &dep, running
		}
		if time.Now().After(deadline) {
			t.Fatalf("Deployment %s not as its installer means it behind Service %s: env applied %v, status %+v, %d running pods (want %d), ready endpoints %v (want %d)",
				key, service, configured, st, len(running), replicas, ready, endpoints)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
