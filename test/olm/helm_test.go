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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The chart's names (config/default's, as the bundle's).
const (
	chartDeployment     = "vault-keycloak-operator-controller-manager"
	chartServiceAccount = "vault-keycloak-operator-controller-manager"
	chartWebhookService = "vault-keycloak-operator-webhook-service"
	chartCertSecret     = "vault-keycloak-operator-webhook-server-cert"
)

// TestHelmInstallsAndRunsTheOperator is the path of an admin without OLM:
// the chart (dist/chart, generated from config/) lints clean and renders
// each way of getting the webhook certificate; installed into the local
// cluster (no cert-manager there) with a certificate Secret the admin made
// first, the manager runs in the place of the chart's pod with the chart's
// RBAC, its webhooks answer through the chart's configurations and every
// sample of both groups in both versions becomes Ready against the real
// Vault and Keycloak; uninstalled, the CRDs and the objects stay.
func TestHelmInstallsAndRunsTheOperator(t *testing.T) {
	helm := os.Getenv(harness.EnvHelmBin)
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm: %s=%q: %v; run 'make test', which builds it", harness.EnvHelmBin, helm, err)
	}
	chart := filepath.Join(harness.RepoRoot(), "dist", "chart")
	run := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		out, err := exec.Command(helm, args...).CombinedOutput()
		return string(out), err
	}
	t.Run("helm lint is clean", func(t *testing.T) {
		if out, err := run(t, "lint", "--strict", chart); err != nil || strings.Contains(out, "[WARNING]") {
			t.Fatalf("helm lint: %v\n%s", err, out)
		}
	})
	t.Run("each certificate source renders", func(t *testing.T) { renderModes(t, run, chart) })

	e := newEnv(t)
	ctx := context.Background()
	kubeconfig := "--kubeconfig=" + e.cluster.Kubeconfig
	t.Run("no certificate: the install fails saying what to do", func(t *testing.T) {
		out, err := run(t, "install", "vko", chart, "--namespace", "no-cert", "--create-namespace", kubeconfig)
		if err == nil || !strings.Contains(out, "create the kubernetes.io/tls Secret no-cert/"+chartCertSecret) {
			t.Fatalf("helm install without a certificate: %v\n%s", err, out)
		}
	})

	// The admin's certificate for the webhook Service, made first.
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: installNamespace}}); err != nil {
		t.Fatal(err)
	}
	host := chartWebhookService + "." + installNamespace + ".svc"
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, nil, []string{host + ".cluster.local"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: chartCertSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": certPEM},
	}); err != nil {
		t.Fatal(err)
	}
	if !t.Run("helm install", func(t *testing.T) {
		// Values other than the defaults, each of a kind the manager's
		// pod takes: a flag, an environment variable, metadata.
		out, err := run(t, "install", "vko", chart, "--namespace", installNamespace, kubeconfig,
			"--set", "extraArgs[0]=--max-backoff=30s", "--set", "extraEnv[0].name=GOMEMLIMIT", "--set", "extraEnv[0].value=200MiB",
			"--set", "podLabels.team=platform", "--set", "deploymentAnnotations.owner=platform")
		if err != nil {
			t.Fatalf("helm install: %v\n%s", err, out)
		}
		if !strings.Contains(out, "Webhook certificate: Secret "+chartCertSecret) || strings.Contains(out, "WARNING") {
			t.Errorf("the notes do not say where the certificate comes from, or warn of a missing CA:\n%s", out)
		}
	}) {
		return
	}
	// A setting for which the chart has no value of its own, in the
	// ConfigMap every install path reads.
	if err := e.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: "vault-keycloak-operator-settings"},
		Data: map[string]string{"max-concurrent-reconciles": "3"}}); err != nil {
		t.Fatal(err)
	}
	if !t.Run("manager runs as the chart's ServiceAccount", func(t *testing.T) {
		e.runAndApplySamples(t, chartServiceAccount, func() {
			e.startPod(t, operatorPod{name: "helm", deployment: chartDeployment, service: chartWebhookService, certSecret: chartCertSecret, serviceAccount: chartServiceAccount})
		})
		if log := e.manager.Log(); !strings.Contains(log, `"msg":"settings from the ConfigMap"`) || !strings.Contains(log, `"flags":["max-concurrent-reconciles"]`) {
			t.Errorf("the manager did not take max-concurrent-reconciles from its ConfigMap:\n%s", e.manager.LogTail(40))
		}
		// The pod ran with the values given (startPod runs the manager
		// with the container's args and env).
		var dep appsv1.Deployment
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: chartDeployment}, &dep); err != nil {
			t.Fatal(err)
		}
		pod := dep.Spec.Template
		if dep.Annotations["owner"] != "platform" || pod.Labels["team"] != "platform" ||
			!slices.Contains(pod.Spec.Containers[0].Args, "--max-backoff=30s") ||
			!slices.Contains(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "GOMEMLIMIT", Value: "200MiB"}) {
			t.Errorf("the Deployment lacks a value given to helm install: annotations %v, pod labels %v, args %v, env %v",
				dep.Annotations, pod.Labels, pod.Spec.Containers[0].Args, pod.Spec.Containers[0].Env)
		}
	}) {
		return
	}
	if !t.Run("three shards: each its share, a killed leader's taken over by its standby", func(t *testing.T) { e.helmShards(t, run, chart, kubeconfig) }) {
		return
	}
	t.Run("uninstall keeps the CRDs and the objects", func(t *testing.T) {
		if out, err := run(t, "uninstall", "vko", "--namespace", installNamespace, kubeconfig); err != nil {
			t.Fatalf("helm uninstall: %v\n%s", err, out)
		}
		for _, name := range manager.OwnedCRDs {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := e.c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
				t.Errorf("CRD %s after uninstall: %v", name, err)
			}
		}
		for _, s := range harness.Samples {
			// The stored version: no conversion webhook is left to call.
			if _, err := s.Get(ctx, e.c, "v1beta1"); err != nil {
				t.Errorf("after uninstall: %v", err)
			}
		}
	})
	t.Run("no secret value in the manager's log", e.checkLogs)
}

// caBundleValue is a client configuration's caBundle with a value (the CRD
// schemas have a caBundle property too, a map).
var caBundleValue = regexp.MustCompile(`(?m)^ *caBundle: \S`)

// renderModes renders the chart offline (helm template) each way the
// webhook certificate can come, and with and without the Prometheus
// Operator's API.
func renderModes(t *testing.T, run func(*testing.T, ...string) (string, error), chart string) {
	template := func(args ...string) string {
		t.Helper()
		out, err := run(t, append([]string{"template", "vko", chart, "--namespace", "ops"}, args...)...)
		if err != nil {
			t.Fatalf("helm template %v: %v\n%s", args, err, out)
		}
		return out
	}
	// 3 CRDs' conversion (VaultServer has one version) and 7 admission webhooks.
	const clientConfigs = 10
	withCertManager := template("--set", "webhook.certificates=cert-manager")
	if !strings.Contains(withCertManager, "kind: Certificate") || strings.Count(withCertManager, "cert-manager.io/inject-ca-from: ops/vault-keycloak-operator-serving-cert") != 6 || caBundleValue.MatchString(withCertManager) {
		t.Errorf("with cert-manager: want a Certificate, the CA injected into 4 CRDs and 2 webhook configurations, no caBundle of the chart's")
	}
	auto := template("--api-versions", "cert-manager.io/v1")
	if !strings.Contains(auto, "kind: Certificate") {
		t.Errorf("auto, on a cluster that serves cert-manager.io/v1: no Certificate")
	}
	withSecret := template("--set", "webhook.certificates=secret", "--set", "webhook.caBundle=Q0E=")
	if strings.Contains(withSecret, "kind: Certificate") || strings.Count(withSecret, "caBundle: Q0E=") != clientConfigs {
		t.Errorf("with a Secret: want caBundle Q0E= in each of %d client configurations (%d) and no Certificate", clientConfigs, strings.Count(withSecret, "caBundle: Q0E="))
	}
	if strings.Contains(withSecret, "kind: PrometheusRule") || strings.Contains(withSecret, "kind: ServiceMonitor") {
		t.Errorf("without the Prometheus Operator's API: a PrometheusRule or ServiceMonitor, which the install would fail on")
	}
	monitored := template("--api-versions", "monitoring.coreos.com/v1/PrometheusRule", "--api-versions", "monitoring.coreos.com/v1/ServiceMonitor",
		"--set", "monitoring.labels.release=kps", "--set", "monitoring.dashboardNamespace=grafana")
	if n := strings.Count(monitored, "    release: kps\n"); n != 3 {
		t.Errorf("monitoring.labels on %d objects, want the ServiceMonitor, the PrometheusRule and the dashboard", n)
	}
	if !strings.Contains(monitored, "  name: vault-keycloak-operator-grafana-dashboard\n  namespace: grafana\n") {
		t.Errorf("the dashboard is not in monitoring.dashboardNamespace")
	}
	for _, want := range []string{"kind: PrometheusRule", "kind: ServiceMonitor", "alert: VKORotationOverdue", "{{ $labels.service }}", "grafana_dashboard: \"1\""} {
		if !strings.Contains(monitored, want) {
			t.Errorf("with the Prometheus Operator's API: no %q", want)
		}
	}
	placed := template("--set", "replicas=2", "--set", "image.digest=sha256:"+strings.Repeat("ab", 32),
		"--set", "nodeSelector.kubernetes\\.io/os=linux", "--set", "tolerations[0].key=dedicated", "--set", "tolerations[0].operator=Exists",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
		"--set", "topologySpreadConstraints[0].maxSkew=1", "--set", "topologySpreadConstraints[0].topologyKey=zone",
		"--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway", "--set", "priorityClassName=platform-critical",
		"--set", "podAnnotations.audit=on", "--set", "deploymentLabels.tier=ops")
	for _, want := range []string{"kind: PodDisruptionBudget", "maxUnavailable: 1", "@sha256:" + strings.Repeat("ab", 32),
		"kubernetes.io/os: linux", "key: dedicated", "key: pool", "topologyKey: zone", "priorityClassName: platform-critical",
		"audit: \"on\"", "tier: ops"} {
		if !strings.Contains(placed, want) {
			t.Errorf("with every placement value set: no %q in\n%s", want, placed)
		}
	}
	sharded := template("--set", "shards=3")
	for i := range 3 {
		for _, want := range []string{fmt.Sprintf("name: %s-shard-%d\n", chartDeployment, i), fmt.Sprintf("vault-keycloak-operator/shard: \"%d\"", i),
			fmt.Sprintf("- --shard-index=%d\n", i)} {
			if !strings.Contains(sharded, want) {
				t.Errorf("shards=3: no %q", want)
			}
		}
	}
	if strings.Count(sharded, "kind: Deployment\n") != 3 || strings.Count(sharded, "- --shards=3\n") != 3 || !strings.Contains(sharded, "kind: PodDisruptionBudget") {
		t.Errorf("shards=3: want three Deployments, each with --shards=3, and a PodDisruptionBudget")
	}
	if one := template(); strings.Contains(one, "- --shards") || strings.Contains(one, "controller-manager-shard-0") {
		t.Errorf("one shard: the Deployment must stay the one of releases before shards")
	}
	for _, bad := range []struct{ args, says string }{
		{"shards=0", "shards 0: must be from 1 to 256"},
		{"extraArgs[0]=--shard-index=1", "extraArgs --shard-index=1: set the shards value instead"},
		{"extraEnv[0].name=VKO_SHARDS,extraEnv[0].value=3", "extraEnv VKO_SHARDS: set the shards value instead"},
	} {
		if out, err := run(t, "template", "vko", chart, "--set", bad.args); err == nil || !strings.Contains(out, bad.says) {
			t.Errorf("%s: %v\n%s", bad.args, err, out)
		}
	}
	if strings.Contains(template(), "kind: PodDisruptionBudget") {
		t.Errorf("one replica: a PodDisruptionBudget, which would block every drain")
	}
	if out, err := run(t, "template", "vko", chart, "--set", "webhook.certificates=both"); err == nil || !strings.Contains(out, `webhook.certificates "both": must be auto, cert-manager or secret`) {
		t.Errorf("webhook.certificates=both: %v\n%s", err, out)
	}
}
