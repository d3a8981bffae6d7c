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
	"context"
	"errors"
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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const operatorNamespace = "vault-keycloak-operator-system"

// The Vault servers the demo runs against (make demo VAULT=...).
const (
	vaultServer   = "vault"
	openBaoServer = "openbao"
)

// serverName is how the demo names its Vault server, with its article.
func serverName(server string) (name, article string, err error) {
	switch server {
	case vaultServer:
		return "Vault", "a", nil
	case openBaoServer:
		return "OpenBao", "an", nil
	}
	return "", "", fmt.Errorf("--vault=%q: the demo runs against vault or openbao", server)
}

func run(ctx context.Context, out io.Writer, once bool, server string) error {
	say := func(format string, a ...any) { _, _ = fmt.Fprintf(out, format+"\n", a...) }
	section := func(title string) { say("\n=== %s", title) }
	logDir, err := os.MkdirTemp("", "vko-demo-")
	if err != nil {
		return err
	}

	name, article, err := serverName(server)
	if err != nil {
		return err
	}
	section("Starting " + article + " " + name + " dev server, a Keycloak dev server and a local control plane")
	vault, keycloak, stopServices, err := services(ctx, logDir, server)
	defer stopServices()
	if err != nil {
		return err
	}
	say("%-8s %s", name, vault.Addr)
	say("Keycloak %s", keycloak.URL)
	// No Vault in the operator's environment: a VaultServer says where
	// Vault is. The manager logs in with its ServiceAccount's token, as a
	// pod does (the file is written once the ServiceAccount exists).
	vaultCfg := vaultclient.ConfigFromEnv()
	vaultCfg.Address, vaultCfg.Token = "", ""
	vaultCfg.ServiceAccountTokenPath = filepath.Join(logDir, "sa-token")
	op, err := harness.Start(harness.Config{Options: manager.Options{Vault: vaultCfg, OperatorNamespace: operatorNamespace}})
	if err != nil {
		return err
	}
	defer op.Stop()
	say("kube-apiserver %s, with the CRDs and webhooks installed; the manager runs with its webhooks", op.Config.Host)
	say("KUBECONFIG=%s", op.Kubeconfig)

	section("What the Vault and Keycloak admins do once")
	if err := adminSetup(ctx, op, vault, keycloak, logDir); err != nil {
		return err
	}
	say("Vault: Kubernetes auth method enabled and pointed at the API server; role vault-keycloak-operator for the operator's ServiceAccount")
	say("Keycloak: realm \"operator\" with confidential client \"gitea\"; operator client in realm master")
	say("Secret %s/prod-keycloak-credentials holds the operator's Keycloak credentials", operatorNamespace)

	section("kubectl apply -f config/samples/vault_v1beta1_vaultserver.yaml (where Vault is, and the grants)")
	if err := applyVaultServer(ctx, op, logDir, vault.Addr, say); err != nil {
		return err
	}

	section("kubectl apply -f config/samples (both groups, both versions)")
	// The VaultApp sample's refresh is shortened so that drift repair shows quickly.
	dir, err := harness.RenderSamples(logDir, keycloak.URL, "refreshInterval: 5m", "refreshInterval: 30s")
	if err != nil {
		return err
	}
	applied, err := op.RunKubectl("apply", "-n", "default", "-f", dir)
	if err != nil {
		return err
	}
	say("%s", strings.TrimSpace(applied))
	say("(the VaultApp sample's refreshInterval is shortened to 30s, so that drift repair shows quickly)")

	for _, s := range harness.Samples {
		if err := s.WaitReady(ctx, op.Client, 2*time.Minute); err != nil {
			return err
		}
		say("%s %s/%s %s: %s=True", s.Kind, s.Group, s.Version, s.Name, s.Condition)
	}

	section("kubectl get")
	for _, args := range [][]string{{"get", "vaultservers"}, {"get", "vaultapps", "-n", "default"}, {"get", "keycloakservers"}, {"get", "keycloakclientcredentials", "-n", "default"}} {
		table, err := op.RunKubectl(args...)
		if err != nil {
			return err
		}
		say("$ kubectl %s\n%s", strings.Join(args, " "), strings.TrimSpace(table))
	}
	for _, s := range harness.Samples {
		args := []string{"describe", strings.ToLower(s.Kind) + "s." + s.Version + "." + s.Group, s.Name}
		if s.Namespaced {
			args = append(args, "-n", "default")
		}
		section("kubectl " + strings.Join(args, " "))
		described, err := op.RunKubectl(args...)
		if err != nil {
			return err
		}
		say("%s", strings.TrimSpace(described))
	}

	admin, err := vault.AdminClient()
	if err != nil {
		return err
	}
	if err := showWhatItWrote(ctx, op, admin, section, say); err != nil {
		return err
	}

	section("Self-healing")
	if err := showSelfHealing(ctx, op, admin, say); err != nil {
		return err
	}

	section("Done")
	say("demo: all %d samples ready; policy drift repaired; deleted Secret re-created", len(harness.Samples))
	if once {
		return nil
	}
	say("The operator keeps running; try kubectl --kubeconfig %s get vaultapps -A. Ctrl-C stops everything.", op.Kubeconfig)
	<-ctx.Done()
	return nil
}

// adminSetup is what the Vault and Keycloak admins do once, and the
// operator's ServiceAccount token a pod would have mounted.
func adminSetup(ctx context.Context, op *harness.Operator, vault *harness.Vault, keycloak *harness.Keycloak, dir string) error {
	if err := harness.AdminSetup(ctx, op.Client, op.Config, vault, keycloak, operatorNamespace, "vault-keycloak-operator-demo"); err != nil {
		return err
	}
	_, _, err := harness.OperatorIdentity(ctx, op.Client, op.Config, vault, operatorNamespace, operatorServiceAccount, dir)
	return err
}

// operatorServiceAccount is the ServiceAccount the demo's manager logs in
// to Vault as.
const operatorServiceAccount = "vault-keycloak-operator-controller-manager"

// applyVaultServer applies the VaultServer sample, pointed at the demo's
// Vault, and waits until the operator has logged in to it.
func applyVaultServer(ctx context.Context, op *harness.Operator, dir, vaultAddr string, say func(string, ...any)) error {
	file, err := harness.RenderVaultServerSample(dir, vaultAddr)
	if err != nil {
		return err
	}
	applied, err := op.RunKubectl("apply", "-f", file)
	if err != nil {
		return err
	}
	say("%s", strings.TrimSpace(applied))
	took, err := harness.WaitVaultServerConnected(ctx, op.Client, harness.VaultServerSample, time.Minute)
	if err != nil {
		return err
	}
	say("VaultServer %s: Connected=True after %s (the operator logged in with its ServiceAccount)", harness.VaultServerSample, took.Round(time.Millisecond))
	return nil
}

// showWhatItWrote prints the policies and roles the operator wrote into
// Vault, and the keys (never the values) of the Secrets it wrote.
func showWhatItWrote(ctx context.Context, op *harness.Operator, admin *vaultapi.Client, section func(string), say func(string, ...any)) error {
	section("What the operator wrote into Vault")
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
	return nil
}

// services reuses a Vault and a Keycloak given in the environment, or
// starts them side by side (Keycloak takes about a minute); an OpenBao is
// always the demo's own.
func services(ctx context.Context, logDir, server string) (*harness.Vault, *harness.Keycloak, func(), error) {
	var stops []func()
	stop := func() {
		for _, s := range stops {
			s()
		}
	}
	vault, verr := harness.VaultFromEnv()
	start := harness.StartVault
	if server == openBaoServer {
		vault, verr, start = nil, errors.New("the demo starts its own OpenBao"), harness.StartOpenBao
	}
	keycloak, kerr := harness.KeycloakFromEnv()
	g, gctx := errgroup.WithContext(ctx)
	if verr != nil {
		g.Go(func() (err error) { vault, err = start(gctx, logDir); return err })
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
