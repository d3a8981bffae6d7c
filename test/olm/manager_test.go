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
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// runFirstManager does the admins' part, runs the manager in the place of
// the pod OLM deployed, and applies the samples of both groups in both
// versions: the webhooks answer, and every sample becomes Ready against the
// real Vault and Keycloak.
func (e *env) runFirstManager(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	sa := csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].ServiceAccountName
	e.runAndApplySamples(t, sa, func() {
		e.refusedStarts(t, csv)
		e.startManager(t, csv)
		if log := e.manager.Log(); !strings.Contains(log, `"msg":"settings from the ConfigMap"`) || !strings.Contains(log, `"flags":["max-backoff"]`) {
			t.Errorf("the manager of OLM's Deployment did not take max-backoff from its ConfigMap:\n%s", e.manager.LogTail(40))
		}
	})
}

// refusedStarts: the manager of OLM's Deployment stops at its start, saying
// why, on an invalid setting in its ConfigMap and on shards (which OLM's one
// Deployment cannot run); with the setting corrected it starts (the caller
// starts it), taking the ConfigMap's settings.
func (e *env) refusedStarts(t *testing.T, csv *operatorsv1alpha1.ClusterServiceVersion) {
	ctx := context.Background()
	strategy := csv.Spec.InstallStrategy.StrategySpec
	depName := strategy.DeploymentSpecs[0].Name
	pod := operatorPod{name: csv.Name, deployment: depName, service: depName + "-service", certSecret: depName + "-service-cert",
		serviceAccount: strategy.ClusterPermissions[0].ServiceAccountName}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: "vault-keycloak-operator-settings"},
		Data: map[string]string{"max-backoff": "soon"}}
	if err := e.c.Create(ctx, settings); err != nil {
		t.Fatal(err)
	}
	e.waitRefused(t, pod, `key \"max-backoff\": \"soon\" is not a value of --max-backoff`)
	// Corrected, it stays for the rest of the test: the upgrades run with it.
	settings.Data = map[string]string{"max-backoff": "45s"}
	if err := e.c.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	// OLM sets OPERATOR_CONDITION_NAME on its Deployment: with it, shards
	// (from a Subscription's config env) are refused.
	dep, _ := waitPods(t, e.c, client.ObjectKey{Namespace: installNamespace, Name: depName}, pod.service, nil, 1, 0)
	if !slices.ContainsFunc(dep.Spec.Template.Spec.Containers[0].Env, func(v corev1.EnvVar) bool { return v.Name == "OPERATOR_CONDITION_NAME" && v.Value != "" }) {
		t.Errorf("OLM's Deployment has no OPERATOR_CONDITION_NAME, by which the manager knows it runs under OLM: env %v", dep.Spec.Template.Spec.Containers[0].Env)
	}
	pod.name += "-sharded"
	pod.addEnv = []string{"VKO_SHARDS=3"}
	e.waitRefused(t, pod, "--shards=3 under OLM (OPERATOR_CONDITION_NAME is set): OLM runs one Deployment")
}

// runAndApplySamples does the admins' part for the operator's
// ServiceAccount sa, starts the manager (start), and applies the samples.
func (e *env) runAndApplySamples(t *testing.T, sa string, start func()) {
	ctx := context.Background()
	if err := harness.AdminSetup(ctx, e.c, e.cluster.Config, e.vault, e.keycloak, installNamespace, "vault-keycloak-operator-olm"); err != nil {
		t.Fatal(err)
	}
	if err := e.vault.AllowOperator(ctx, installNamespace, sa); err != nil {
		t.Fatal(err)
	}
	start()

	// Where Vault is, and the grants: the VaultServer sample, the default.
	server, err := harness.RenderVaultServerSample(e.dir, e.vault.Addr)
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if out, err := exec.Command(kubectl, "--kubeconfig", e.cluster.Kubeconfig, "apply", "-f", server).CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply the VaultServer sample: %v\n%s", err, out)
	}
	if _, err := harness.WaitVaultServerConnected(ctx, e.c, harness.VaultServerSample, time.Minute); err != nil {
		t.Fatalf("%v; manager log:\n%s", err, e.manager.LogTail(30))
	}

	samples, err := harness.RenderSamples(e.dir, e.keycloak.URL)
	if err != nil {
		t.Fatal(err)
	}
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
	const want = `spec.vaultPolicy: Forbidden: create, update, patch, delete on "db" (secret/data/default/db) not granted to namespace "default" by VaultServer "central-vault"`
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
	for _, m := range append(slices.Clone(e.managers), e.refused...) {
		log := m.Log()
		// One that ran says it started; one refused at its start, why.
		if started, refused := strings.Contains(log, "starting manager"), slices.Contains(e.refused, m); started == refused ||
			refused && !strings.Contains(log, `"msg":"invalid configuration"`) {
			t.Errorf("a manager's log lacks its start line, or a refused one's its reason (refused: %v): not the log looked for", refused)
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
