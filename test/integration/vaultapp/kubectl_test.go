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

package vaultapp_test

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return op.Kubectl(t, args...)
}

// TestSamplesApplyAndBecomeReady applies config/samples of both versions as
// a user would, with kubectl.
func TestSamplesApplyAndBecomeReady(t *testing.T) {
	ns := newNamespace(t, nil)
	samples := filepath.Join(harness.RepoRoot(), "config", "samples")
	out := kubectl(t, "apply", "-n", ns, "-f", filepath.Join(samples, "vault_v1beta1_vaultapp.yaml"), "-f", filepath.Join(samples, "vault_v1alpha1_vaultapp.yaml"))
	if !regexp.MustCompile(`(?m)^Warning: vault.exemple.com/v1alpha1 VaultApp is deprecated; use vault.exemple.com/v1beta1$`).MatchString(out) {
		t.Errorf("kubectl apply of the v1alpha1 sample did not warn of the deprecation:\n%s", out)
	}
	for _, name := range []string{"shop-api", "legacy-api"} {
		got := waitCondition(t, client.ObjectKey{Namespace: ns, Name: name}, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
		// The operator never rewrites the spec it was given: the sample
		// writes tokenTTL "1h", which Go would send back as "1h0m0s".
		if got.Generation != 1 {
			t.Errorf("%s: generation %d after the operator's finalizer and status writes, want 1", name, got.Generation)
		}
	}
	// The printer columns show Ready, Reason and Policy.
	table := kubectl(t, "get", "vaultapps.v1beta1.vault.exemple.com", "-n", ns)
	for _, want := range []string{`(?m)^NAME\s+READY\s+REASON\s+POLICY\s+AGE$`, `(?m)^shop-api\s+True\s+Synced\s+app\.` + ns + `\.shop-api\s`} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("kubectl get lacks %s:\n%s", want, table)
		}
	}
}

// TestDescribeShowsConditionsAndEvents reads what an operator on call sees.
func TestDescribeShowsConditionsAndEvents(t *testing.T) {
	ns := newNamespace(t, nil)
	if err := op.Client.Create(context.Background(), shopAPI(ns)); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, client.ObjectKey{Namespace: ns, Name: "shop-api"}, vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced, 20*time.Second)
	waitEvent(t, ns, "shop-api", vaultv1beta1.ReasonCreated)
	out := kubectl(t, "describe", "vaultapp", "shop-api", "-n", ns)
	for _, want := range []string{
		`Policy Name:\s+app\.` + ns + `\.shop-api`,
		`Reason:\s+Synced\s+Status:\s+True\s+Type:\s+PolicySynced`,
		`Message:\s+Vault policy and role are in step with the spec\s+Observed Generation:\s+1\s+Reason:\s+Synced\s+Status:\s+True\s+Type:\s+Ready`,
		`Reason:\s+Synced\s+Status:\s+True\s+Type:\s+RoleSynced`,
		`(?m)^Events:\s+Type\s+Reason\s+Age\s+From\s+Message`,
		`Normal\s+Created\s+.*vaultapp-controller\s+wrote policy and role app\.` + ns + `\.shop-api in Vault`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("kubectl describe lacks %s:\n%s", want, out)
		}
	}
}
