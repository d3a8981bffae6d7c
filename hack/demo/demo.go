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

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/operator"
	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const operatorNamespace = "vault-keycloak-operator-system"

// samples are config/samples, with the kind and the condition that says it works.
var samples = []struct {
	file, kind, group, version, name, condition string
	namespaced                                  bool
}{
	{"vault_v1beta1_vaultapp.yaml", "VaultApp", "vault.exemple.com", "v1beta1", "shop-api", "Ready", true},
	{"vault_v1alpha1_vaultapp.yaml", "VaultApp", "vault.exemple.com", "v1alpha1", "legacy-api", "Ready", true},
	{"secrets_v1beta1_keycloakserver.yaml", "KeycloakServer", "secrets.carbogame.com", "v1beta1", "prod-keycloak", "Connected", false},
	{"secrets_v1alpha1_keycloakserver.yaml", "KeycloakServer", "secrets.carbogame.com", "v1alpha1", "legacy-keycloak", "Connected", false},
	{"secrets_v1beta1_keycloakclientcredential.yaml", "KeycloakClientCredential", "secrets.carbogame.com", "v1beta1", "gitea", "Ready", true},
	{"secrets_v1alpha1_keycloakclientcredential.yaml", "KeycloakClientCredential", "secrets.carbogame.com", "v1alpha1", "gitea-legacy", "Ready", true},
}

func run(ctx context.Context, out io.Writer, once bool) error {
	say := func(format string, a ...any) { _, _ = fmt.Fprintf(out, format+"\n", a...) }
	section := func(title string) { say("\n=== %s", title) }
	logDir, err := os.MkdirTemp("", "vko-demo-")
	if err != nil {
		return err
	}

	section("Starting a Vault dev server, a Keycloak dev server and a local control plane")
	vault, keycloak, stopServices, err := services(ctx, logDir)
	defer stopServices()
	if err != nil {
		return err
	}
	say("Vault    %s", vault.Addr)
	say("Keycloak %s", keycloak.URL)
	vaultCfg := vaultclient.ConfigFromEnv()
	vaultCfg.Address, vaultCfg.Token = vault.Addr, vault.Token
	op, err := harness.Start(harness.Config{Options: operator.Options{Vault: vaultCfg, OperatorNamespace: operatorNamespace}})
	if err != nil {
		return err
	}
	defer op.Stop()
	say("kube-apiserver %s, with the CRDs and webhooks installed; the manager runs with its webhooks", op.Config.Host)
	say("KUBECONFIG=%s", op.Kubeconfig)

	section("What the Vault and Keycloak admins do once")
	if err := adminSetup(ctx, op, vault, keycloak); err != nil {
		return err
	}
	say("Vault: Kubernetes auth method enabled and pointed at the API server")
	say("Keycloak: realm \"operator\" with confidential client \"gitea\"; operator client in realm master")
	say("Secret %s/prod-keycloak-credentials holds the operator's Keycloak credentials", operatorNamespace)

	section("kubectl apply -f config/samples (both groups, both versions)")
	dir, err := renderSamples(keycloak.URL)
	if err != nil {
		return err
	}
	applied, err := op.RunKubectl("apply", "-n", "default", "-f", dir)
	if err != nil {
		return err
	}
	say("%s", strings.TrimSpace(applied))
	say("(the VaultApp sample's refreshInterval is shortened to 30s, so that drift repair shows quickly)")

	for _, s := range samples {
		if err := waitCondition(ctx, op.Client, s.group, s.version, s.kind, s.name, s.namespaced, s.condition); err != nil {
			return err
		}
		say("%s %s/%s %s: %s=True", s.kind, s.group, s.version, s.name, s.condition)
	}

	section("kubectl get")
	for _, args := range [][]string{{"get", "vaultapps", "-n", "default"}, {"get", "keycloakservers"}, {"get", "keycloakclientcredentials", "-n", "default"}} {
		table, err := op.RunKubectl(args...)
		if err != nil {
			return err
		}
		say("$ kubectl %s\n%s", strings.Join(args, " "), strings.TrimSpace(table))
	}
	for _, s := range samples {
		args := []string{"describe", strings.ToLower(s.kind) + "s." + s.version + "." + s.group, s.name}
		if s.namespaced {
			args = append(args, "-n", "default")
		}
		section("kubectl " + strings.Join(args, " "))
		described, err := op.RunKubectl(args...)
		if err != nil {
			return err
		}
		say("%s", strings.TrimSpace(described))
	}

	section("What the operator wrote into Vault")
	admin, err := vault.AdminClient()
	if err != nil {
		return err
	}
	for _, name := range []string{"app.default.shop-api", "app.default.legacy-api"} {
		policy, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil {
			return err
		}
		role, err := admin.Logical().ReadWithContext(ctx, "auth/kubernetes/role/"+name)
		if err != nil || role == nil {
			return fmt.Errorf("read role %s: %v", name, err)
		}
		say("--- policy %s\n%s", name, strings.TrimSpace(policy))
		say("--- role %s: bound_service_account_names=%v bound_service_account_namespaces=%v token_policies=%v token_ttl=%vs",
			name, role.Data["bound_service_account_names"], role.Data["bound_service_account_namespaces"], role.Data["token_policies"], role.Data["token_ttl"])
	}

	section("What the operator wrote into Secrets (keys only, never values)")
	for _, name := range []string{"gitea-secret-creds", "gitea-legacy-creds"} {
		var s corev1.Secret
		if err := op.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &s); err != nil {
			return err
		}
		keys := make([]string, 0, len(s.Data))
		for k := range s.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		say("Secret default/%s (%s): keys %s", name, s.Type, strings.Join(keys, ", "))
	}

	section("Self-healing")
	if err := showSelfHealing(ctx, op, admin, say); err != nil {
		return err
	}

	section("Done")
	say("demo: all %d samples ready; policy drift repaired; deleted Secret re-created", len(samples))
	if once {
		return nil
	}
	say("The operator keeps running; try kubectl --kubeconfig %s get vaultapps -A. Ctrl-C stops everything.", op.Kubeconfig)
	<-ctx.Done()
	return nil
}

// services reuses a Vault and a Keycloak given in the environment, or
// starts them side by side (Keycloak takes about a minute).
func services(ctx context.Context, logDir string) (*harness.Vault, *harness.Keycloak, func(), error) {
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	vault, verr := harness.VaultFromEnv()
	keycloak, kerr := harness.KeycloakFromEnv()
	g, gctx := errgroup.WithContext(ctx)
	if verr != nil {
		g.Go(func() (err error) { vault, err = harness.StartVault(gctx, logDir); return err })
	}
	if kerr != nil {
		g.Go(func() (err error) { keycloak, err = harness.StartKeycloak(gctx, logDir); return err })
	}
	err := g.Wait()
	if verr != nil && vault != nil {
		stops = append(stops, vault.Stop)
	}
	if kerr != nil && keycloak != nil {
		stops = append(stops, keycloak.Stop)
	}
	return vault, keycloak, stop, err
}

// adminSetup does the Vault and Keycloak administrators' part.
func adminSetup(ctx context.Context, op *harness.Operator, vault *harness.Vault, keycloak *harness.Keycloak) error {
	if err := vault.ConfigureKubernetesAuth(ctx, op.Client, op.Config); err != nil {
		return err
	}
	a, err := keycloak.Admin(ctx)
	if err != nil {
		return err
	}
	if err := a.CreateRealm(ctx, "operator"); err != nil {
		return err
	}
	if err := a.CreateClient(ctx, "operator", "gitea", ""); err != nil {
		return err
	}
	secret, err := a.CreateOperatorClient(ctx, "vault-keycloak-operator")
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-keycloak-credentials", Namespace: operatorNamespace},
			StringData: map[string]string{"clientId": "vault-keycloak-operator", "clientSecret": secret}},
	} {
		if err := op.Client.Create(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// renderSamples copies config/samples with this Keycloak's address.
func renderSamples(keycloakURL string) (string, error) {
	dir, err := os.MkdirTemp("", "vko-demo-samples-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(harness.RepoRoot(), "config", "samples")
	for _, s := range samples {
		data, err := os.ReadFile(filepath.Join(src, s.file))
		if err != nil {
			return "", err
		}
		data = bytes.ReplaceAll(data, []byte("http://127.0.0.1:8080"), []byte(keycloakURL))
		data = bytes.ReplaceAll(data, []byte("refreshInterval: 5m"), []byte("refreshInterval: 30s"))
		if err := os.WriteFile(filepath.Join(dir, s.file), data, 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// showSelfHealing edits a policy in Vault by hand and deletes a target
// Secret, and waits for the operator to repair both.
func showSelfHealing(ctx context.Context, op *harness.Operator, admin *vaultapi.Client, say func(string, ...any)) error {
	const policy = "app.default.shop-api"
	original, err := admin.Sys().GetPolicyWithContext(ctx, policy)
	if err != nil {
		return err
	}
	if err := admin.Sys().PutPolicyWithContext(ctx, policy, `path "secret/*" { capabilities = ["sudo", "read", "list"] }`); err != nil {
		return err
	}
	say("Edited policy %s in Vault by hand: it now grants sudo on secret/*", policy)
	took, err := until(ctx, 90*time.Second, func() bool {
		now, err := admin.Sys().GetPolicyWithContext(ctx, policy)
		return err == nil && now == original
	})
	if err != nil {
		return fmt.Errorf("policy %s not repaired: %w", policy, err)
	}
	say("policy drift repaired after %s (the VaultApp's refreshInterval is 30s)", took.Round(time.Second))

	key := client.ObjectKey{Namespace: "default", Name: "gitea-secret-creds"}
	var secret corev1.Secret
	if err := op.Client.Get(ctx, key, &secret); err != nil {
		return err
	}
	if err := op.Client.Delete(ctx, &secret); err != nil {
		return err
	}
	say("Deleted Secret %s", key)
	took, err = until(ctx, 30*time.Second, func() bool {
		var again corev1.Secret
		return op.Client.Get(ctx, key, &again) == nil && again.UID != secret.UID
	})
	if err != nil {
		return fmt.Errorf("secret %s not re-created: %w", key, err)
	}
	say("deleted Secret re-created after %s (the operator watches the Secrets it owns)", took.Round(time.Millisecond))
	return nil
}

// until polls ok and returns how long it took to hold.
func until(ctx context.Context, limit time.Duration, ok func() bool) (time.Duration, error) {
	start := time.Now()
	for !ok() {
		if time.Since(start) > limit {
			return 0, fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return time.Since(start), nil
}

// waitCondition waits until the object's condition is True.
func waitCondition(ctx context.Context, c client.Client, group, version, kind, name string, namespaced bool, condition string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	key := client.ObjectKey{Name: name}
	if namespaced {
		key.Namespace = "default"
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := c.Get(ctx, key, obj); err == nil {
			var status struct {
				Conditions []metav1.Condition `json:"conditions"`
			}
			raw, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status")
			if m, ok := raw.(map[string]any); ok {
				_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &status)
			}
			if meta.IsStatusConditionTrue(status.Conditions, condition) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s did not become %s=True within 2 minutes", kind, name, condition)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
