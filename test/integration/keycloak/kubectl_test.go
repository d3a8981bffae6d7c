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

package keycloak_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestSamplesApplyAndBecomeReady applies config/samples of the
// secrets.carbogame.com group, both versions, with kubectl. The Keycloak
// administrator's part comes first: the realm and client the samples name,
// and a service-account client for the operator in the master realm.
func TestSamplesApplyAndBecomeReady(t *testing.T) {
	ctx := context.Background()
	if err := createRealm(ctx, kc, "operator"); err != nil {
		t.Fatal(err)
	}
	if err := createClient(ctx, kc, "operator", "gitea", ""); err != nil {
		t.Fatal(err)
	}
	operatorID, operatorSecret := serviceAccountWithOperatorRoles(t, "vko-operator", "operator")
	if err := op.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-keycloak-credentials", Namespace: operatorNamespace},
		StringData: map[string]string{"clientId": operatorID, "clientSecret": operatorSecret},
	}); err != nil {
		t.Fatal(err)
	}

	samples := filepath.Join(harness.RepoRoot(), "config", "samples")
	dir := t.TempDir()
	for _, f := range []string{"secrets_v1beta1_keycloakserver.yaml", "secrets_v1alpha1_keycloakserver.yaml",
		"secrets_v1beta1_keycloakclientcredential.yaml", "secrets_v1alpha1_keycloakclientcredential.yaml"} {
		data, err := os.ReadFile(filepath.Join(samples, f))
		if err != nil {
			t.Fatal(err)
		}
		// The samples point at a Keycloak on 127.0.0.1:8080; this one listens elsewhere.
		data = bytes.ReplaceAll(data, []byte("http://127.0.0.1:8080"), []byte(kc.URL))
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := op.Kubectl(t, "apply", "-n", "default", "-f", dir)
	if !strings.Contains(out, "Warning: secrets.carbogame.com/v1alpha1 KeycloakClientCredential is deprecated; use secrets.carbogame.com/v1beta1") {
		t.Errorf("no deprecation warning for the v1alpha1 sample:\n%s", out)
	}
	for _, name := range []string{"prod-keycloak", "legacy-keycloak"} {
		waitServer(t, name, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, readyWithin)
	}
	for _, name := range []string{"gitea", "gitea-legacy"} {
		waitCredential(t, client.ObjectKey{Namespace: "default", Name: name}, secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)
	}
	want, _ := clientSecretOf(ctx, kc, "operator", "gitea")
	if got := string(secretOf(t, "default", "gitea-secret-creds").Data["secret"]); got != want {
		t.Error("the sample's Secret does not hold the client's secret")
	}

	table := op.Kubectl(t, "get", "keycloakclientcredentials", "-n", "default")
	if !regexp.MustCompile(`(?m)^gitea\s+True\s+Synced\s+gitea\s+gitea-secret-creds\s`).MatchString(table) {
		t.Errorf("printer columns:\n%s", table)
	}
	servers := op.Kubectl(t, "get", "keycloakservers")
	// No VERSION: Keycloak tells its version to master's admins only, and
	// the sample's operator client has the admin setup's rights alone.
	if !regexp.MustCompile(`(?m)^prod-keycloak\s+http://127\.0\.0\.1:\d+\s+True\s+Connected\s+\d+s$`).MatchString(servers) {
		t.Errorf("printer columns:\n%s", servers)
	}

	describe := op.Kubectl(t, "describe", "keycloakclientcredential", "gitea", "-n", "default")
	for _, want := range []string{
		`Reason:\s+Synced\s+Status:\s+True\s+Type:\s+Ready`,
		`Reason:\s+Synced\s+Status:\s+True\s+Type:\s+SourceAvailable`,
		`Reason:\s+Synced\s+Status:\s+True\s+Type:\s+SecretsSynced`,
		`Targets:\s+Namespace:\s+default\s+Reason:\s+Synced\s+Synced:\s+true`,
		`Normal\s+Created\s+.*keycloakclientcredential-controller\s+created Secret default/gitea-secret-creds`,
	} {
		if !regexp.MustCompile(want).MatchString(describe) {
			t.Errorf("kubectl describe lacks %s:\n%s", want, describe)
		}
	}
}

// TestNoSecretValueInLogsEventsStatusOrMetrics gathers every secret value
// this suite handled — client secrets in the Secrets the operator wrote and
// the operator's own credentials — and looks for them wherever the operator
// writes for people to read.
func TestNoSecretValueInLogsEventsStatusOrMetrics(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	kcc := credential(ns, "leak-check", newServer(t, kc, ns), newClientID(t, ""))
	if err := op.Client.Create(ctx, kcc); err != nil {
		t.Fatal(err)
	}
	waitCredential(t, client.ObjectKeyFromObject(kcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, readyWithin)

	secrets := []string{kc.Password}
	var written corev1.SecretList
	if err := op.Client.List(ctx, &written, client.MatchingLabels{"app.kubernetes.io/managed-by": "vault-keycloak-operator"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range written.Items {
		secrets = append(secrets, string(s.Data["secret"]))
	}
	var creds corev1.SecretList
	if err := op.Client.List(ctx, &creds, client.InNamespace(operatorNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, s := range creds.Items {
		secrets = append(secrets, string(s.Data["clientSecret"]), string(s.Data["password"]))
	}
	if len(written.Items) < 3 {
		t.Fatalf("only %d Secrets written so far: the check would prove little", len(written.Items))
	}

	var places = map[string]string{"logs": op.Logs()}
	var events corev1.EventList
	if err := op.Client.List(ctx, &events); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		places["event "+e.Namespace+"/"+e.Name] = e.Message
	}
	var kccs secretsv1beta1.KeycloakClientCredentialList
	var servers secretsv1beta1.KeycloakServerList
	if err := op.Client.List(ctx, &kccs); err != nil {
		t.Fatal(err)
	}
	if err := op.Client.List(ctx, &servers); err != nil {
		t.Fatal(err)
	}
	for _, k := range kccs.Items {
		status, _ := json.Marshal(k.Status)
		places["status of "+k.Namespace+"/"+k.Name] = string(status)
	}
	for _, s := range servers.Items {
		status, _ := json.Marshal(s.Status)
		places["status of "+s.Name] = string(status)
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for _, f := range families {
		_, _ = expfmt.MetricFamilyToText(&text, f)
	}
	places["metrics"] = text.String()

	for where, content := range places {
		if contains(content, secrets...) {
			t.Errorf("a secret value appears in %s", where)
		}
	}
}

// serviceAccountWithOperatorRoles creates the operator's client in the
// master realm with the admin setup's rights in realm, as a cluster admin
// would for authType ClientCredentials.
func serviceAccountWithOperatorRoles(t *testing.T, clientID, realm string) (string, string) {
	t.Helper()
	ctx := context.Background()
	a, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := a.CreateOperatorClient(ctx, clientID, realm)
	if err != nil {
		t.Fatal(err)
	}
	return clientID, secret
}
