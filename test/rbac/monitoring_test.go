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

package rbac

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/config/prometheus"
	"github.com/carbogame/vault-keycloak-operator/internal/monitoring"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// prometheusCRDsEnv names the Prometheus Operator's CRDs (make test sets it
// from hack/ensure.sh prometheus-crds).
const prometheusCRDsEnv = "VKO_PROMETHEUS_CRDS"

const (
	ruleName    = "vault-keycloak-operator-alerts"
	monitorName = "vault-keycloak-operator-controller-manager-metrics-monitor"
)

// The operator, as the CSV's ServiceAccount, installs its ServiceMonitor and
// PrometheusRule once the cluster serves the Prometheus Operator's API,
// owned by its Deployment, with the rules of config/prometheus.
func TestMonitoringInstalledOnceTheAPIIsServed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	deployment := operatorDeployment()
	op := startAsServiceAccount(t, csvStrategy(t), monitoringTweak(time.Second, deployment))

	g.Eventually(op.Logs).WithTimeout(30*time.Second).Should(ContainSubstring("does not serve the Prometheus Operator's API"),
		"the manager did not say why it installs nothing yet")
	installPrometheusCRDs(t, op.Client)

	rule := monitoringObject("PrometheusRule", ruleName)
	g.Eventually(func() error { return op.Client.Get(ctx, client.ObjectKeyFromObject(rule), rule) }).
		WithTimeout(30*time.Second).Should(Succeed(), "no PrometheusRule once the API is served")
	g.Expect(rule.GetOwnerReferences()).To(ConsistOf(HaveField("UID", deployment.UID)), "the rule is not owned by the operator's Deployment")
	g.Expect(alertNames(rule)).To(Equal(alertNames(decode(t, prometheus.Alerts))), "the installed rule's alerts are not config/prometheus/alerts.yaml's")
	monitor := monitoringObject("ServiceMonitor", monitorName)
	g.Expect(op.Client.Get(ctx, client.ObjectKeyFromObject(monitor), monitor)).To(Succeed(), "no ServiceMonitor beside the rule")
	g.Expect(monitor.GetOwnerReferences()).To(ConsistOf(HaveField("UID", deployment.UID)))
}

// An object of the same name that the operator did not write (the Helm
// chart's, here) is left as it is; the other is installed.
func TestMonitoringLeavesAForeignObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	foreign := decode(t, prometheus.Alerts)
	foreign.SetName(ruleName)
	foreign.SetNamespace(operatorNamespace)
	foreign.SetLabels(map[string]string{monitoring.ManagedByLabel: "Helm"})
	g.Expect(unstructured.SetNestedSlice(foreign.Object, []any{map[string]any{"name": "admins-own",
		"rules": []any{map[string]any{"alert": "Theirs", "expr": "vector(1)"}}}}, "spec", "groups")).To(Succeed())
	op := startAsServiceAccount(t, csvStrategy(t), monitoringTweak(time.Second, operatorDeployment()), func(c *harness.Config) {
		grant := c.BeforeManager
		c.BeforeManager = func(cl client.Client) error {
			if err := grant(cl); err != nil {
				return err
			}
			installPrometheusCRDs(t, cl)
			// Established, the kind may still be unknown to the client's
			// discovery for a moment.
			var err error
			NewWithT(t).Eventually(func() bool { err = cl.Create(ctx, foreign); return !apimeta.IsNoMatchError(err) }).
				WithTimeout(10 * time.Second).Should(BeTrue())
			return err
		}
	})

	monitor := monitoringObject("ServiceMonitor", monitorName)
	g.Eventually(func() error { return op.Client.Get(ctx, client.ObjectKeyFromObject(monitor), monitor) }).
		WithTimeout(30*time.Second).Should(Succeed(), "no ServiceMonitor")
	rule := monitoringObject("PrometheusRule", ruleName)
	g.Expect(op.Client.Get(ctx, client.ObjectKeyFromObject(rule), rule)).To(Succeed())
	g.Expect(alertNames(rule)).To(Equal([]string{"Theirs"}), "the Helm chart's rule was overwritten")
	g.Expect(rule.GetLabels()).To(HaveKeyWithValue(monitoring.ManagedByLabel, "Helm"))
	// The installer may write the ServiceMonitor before it looks at the rule.
	g.Eventually(op.Logs).WithTimeout(10*time.Second).Should(ContainSubstring("left as is: not written by the operator"), "the manager did not say why it left the rule")
}

// monitoringTweak turns the installer on (looking again every interval)
// and creates the operator's Deployment, which owns what it installs.
func monitoringTweak(interval time.Duration, d *appsv1.Deployment) func(*harness.Config) {
	return func(c *harness.Config) {
		c.Options.InstallMonitoring, c.Options.MonitoringInterval = true, interval
		grant := c.BeforeManager
		c.BeforeManager = func(cl client.Client) error {
			if err := grant(cl); err != nil {
				return err
			}
			return cl.Create(context.Background(), d)
		}
	}
}

// operatorDeployment is the Deployment OLM would create from the CSV, as
// far as the owner reference needs it (no pod runs: no controller here).
func operatorDeployment() *appsv1.Deployment {
	labels := map[string]string{"control-plane": "controller-manager"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: monitoring.DeploymentName, Namespace: operatorNamespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "controller:latest"}}}},
		},
	}
}

// installPrometheusCRDs installs the real Prometheus Operator's
// ServiceMonitor and PrometheusRule CRDs and waits until they are served.
func installPrometheusCRDs(t *testing.T, c client.Client) {
	t.Helper()
	dir := os.Getenv(prometheusCRDsEnv)
	if dir == "" {
		t.Fatalf("%s is not set: run make test, or point it at hack/ensure.sh prometheus-crds's directory", prometheusCRDsEnv)
	}
	ctx := context.Background()
	for _, plural := range []string{"servicemonitors", "prometheusrules"} {
		data, err := os.ReadFile(filepath.Join(dir, "monitoring.coreos.com_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		crd := decode(t, data)
		if err := c.Create(ctx, crd); err != nil {
			t.Fatalf("create CRD %s: %v", crd.GetName(), err)
		}
		NewWithT(t).Eventually(func() bool {
			_ = c.Get(ctx, client.ObjectKeyFromObject(crd), crd)
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				m := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
			return false
		}).WithTimeout(30*time.Second).Should(BeTrue(), "CRD %s not established", crd.GetName())
	}
}

func monitoringObject(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(monitoring.GroupVersion)
	u.SetKind(kind)
	u.SetNamespace(operatorNamespace)
	u.SetName(name)
	return u
}

func decode(t *testing.T, data []byte) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// alertNames are a PrometheusRule's alerts, in order.
func alertNames(rule *unstructured.Unstructured) []string {
	var names []string
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			if name, ok := r.(map[string]any)["alert"].(string); ok {
				names = append(names, strings.TrimSpace(name))
			}
		}
	}
	return names
}
