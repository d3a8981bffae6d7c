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

package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Environment variables that carry a running Vault to the tests.
const (
	EnvVaultAddr  = "VAULT_ADDR"
	EnvVaultToken = "VAULT_TOKEN"
	// EnvVaultBin is the vault binary that hack/ensure.sh built.
	EnvVaultBin = "VKO_VAULT_BIN"
	// EnvBaoBin is OpenBao's bao binary that hack/ensure.sh fetched.
	EnvBaoBin = "VKO_BAO_BIN"
)

// withoutVaultEnv blanks the Vault address and token a child would inherit
// from the test's environment: a server or a manager gets only what it is
// given.
func withoutVaultEnv(env ...string) []string {
	return append([]string{EnvVaultAddr + "=", EnvVaultToken + "="}, env...)
}

// Vault is a real Vault server in dev mode: in memory, unsealed, with a
// known root token.
type Vault struct {
	Addr  string
	Token string

	bin, logDir string
	// name is the server's, in logs: vault or openbao.
	name string
	// namespace is the Vault namespace its admin clients work in (the
	// root when empty): see InNamespace.
	namespace string
	port      int
	proc      *Process
	// dataDir and unsealKey: a persistent server's (StartPersistentVault).
	dataDir, unsealKey string
	// CACert is the PEM file of the CA that signed a TLS server's
	// certificate (StartOpenBaoTLS); empty for plain HTTP.
	CACert string
}

// StartVault starts "vault server -dev" on a free loopback port and waits
// until it is unsealed and active. logDir receives its output.
func StartVault(ctx context.Context, logDir string) (*Vault, error) {
	return startDevServer(ctx, "vault", EnvVaultBin, logDir)
}

// openBao is OpenBao's name in logs and in EnvVaultServer.
const openBao = "openbao"

// EnvVaultServer picks the server StartVaultUnderTest starts: "vault" (the
// default) or "openbao". make test runs the Vault suites once with each.
const EnvVaultServer = "VKO_VAULT_SERVER"

// StartVaultUnderTest starts the server the Vault suites prove the
// operator against: Vault, or OpenBao when VKO_VAULT_SERVER=openbao. An
// unknown name fails, so a typo never tests Vault twice.
func StartVaultUnderTest(ctx context.Context, logDir string) (*Vault, error) {
	switch server := os.Getenv(EnvVaultServer); server {
	case "", "vault":
		return StartVault(ctx, logDir)
	case openBao:
		return StartOpenBao(ctx, logDir)
	default:
		return nil, fmt.Errorf("%s=%q: want vault or openbao", EnvVaultServer, server)
	}
}

// StartOpenBao starts "bao server -dev", OpenBao's, as StartVault does
// Vault's: the same API, and namespaces in its open-source server.
func StartOpenBao(ctx context.Context, logDir string) (*Vault, error) {
	return startDevServer(ctx, openBao, EnvBaoBin, logDir)
}

// StartOpenBaoTLS is StartOpenBao serving HTTPS only, with the certificate
// and CA the dev server generates (-dev-tls): Addr is https://, CACert the
// CA's PEM file, as an admin hands it to a VaultServer's caSecretRef.
func StartOpenBaoTLS(ctx context.Context, logDir string) (*Vault, error) {
	return startServer(ctx, openBao, EnvBaoBin, logDir, true)
}

func startDevServer(ctx context.Context, name, binEnv, logDir string) (*Vault, error) {
	return startServer(ctx, name, binEnv, logDir, false)
}

func startServer(ctx context.Context, name, binEnv, logDir string, tls bool) (*Vault, error) {
	bin := os.Getenv(binEnv)
	if err := requireFile(bin, name+" server", binEnv); err != nil {
		return nil, err
	}
	v := &Vault{Token: "root-token-for-tests", bin: bin, logDir: logDir, name: name}
	scheme := "http"
	if tls {
		scheme, v.CACert = "https", filepath.Join(logDir, name+"-tls", "vault-ca.pem")
		if err := os.MkdirAll(filepath.Dir(v.CACert), 0o700); err != nil {
			return nil, err
		}
	}
	err := retryWhilePortTaken(func() (*Process, error) {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		v.port, v.Addr = port, scheme+"://127.0.0.1:"+strconv.Itoa(port)
		err = v.run(ctx)
		return v.proc, err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Restart starts a new dev server on the same address and token, after
// Stop. Like every dev server, it starts empty.
func (v *Vault) Restart(ctx context.Context) error { return v.run(ctx) }

func (v *Vault) run(ctx context.Context) error {
	bin, port, logDir := v.bin, v.port, v.logDir
	var err error
	// HOME points into logDir: the dev server writes ~/.vault-token, and
	// must not overwrite a developer's own.
	args := []string{"server", "-dev",
		"-dev-listen-address=127.0.0.1:" + strconv.Itoa(port),
		"-dev-root-token-id=" + v.Token,
		"-dev-no-store-token"}
	if v.CACert != "" {
		args = append(args, "-dev-tls", "-dev-tls-cert-dir="+filepath.Dir(v.CACert))
	}
	v.proc, err = start(v.name, logDir, withoutVaultEnv("HOME="+logDir), bin, args...)
	if err != nil {
		return err
	}
	// sys/health answers 200 only once the server is initialized, unsealed and active.
	if err := v.proc.waitHTTPTrusting(ctx, v.Addr+"/v1/sys/health", v.CACert); err != nil {
		v.proc.Stop()
		return err
	}
	return nil
}

// Stop ends the server; everything it held is gone (dev mode keeps no data).
func (v *Vault) Stop() { v.proc.Stop() }

// Product is the server's name as a VaultServer's status gives it: Vault
// or OpenBao.
func (v *Vault) Product() string {
	if v.name == openBao {
		return "OpenBao"
	}
	return "Vault"
}

// PinnedVersion is the version hack/versions.env pins for this server, as
// the server reports it (no leading v).
func (v *Vault) PinnedVersion(t testing.TB) string {
	t.Helper()
	key := "VAULT_VERSION="
	if v.name == openBao {
		key = "OPENBAO_VERSION="
	}
	pins, err := os.ReadFile(filepath.Join(RepoRoot(), "hack", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(pins), "\n") {
		if version, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimPrefix(strings.TrimSpace(version), "v")
		}
	}
	t.Fatalf("hack/versions.env pins no %s", key)
	return ""
}

// Env is what a child process needs to reach this Vault.
func (v *Vault) Env() []string {
	return []string{EnvVaultAddr + "=" + v.Addr, EnvVaultToken + "=" + v.Token}
}

// VaultFromEnv returns the Vault that make test (or the caller) started.
func VaultFromEnv() (*Vault, error) {
	addr, token := os.Getenv(EnvVaultAddr), os.Getenv(EnvVaultToken)
	if addr == "" || token == "" {
		return nil, fmt.Errorf("no Vault to test against: %s and %s are %w; run 'make test', which starts a real Vault dev server", EnvVaultAddr, EnvVaultToken, errNotConfigured)
	}
	return &Vault{Addr: addr, Token: token}, nil
}

// CreateNamespace creates the Vault namespace name (OpenBao's, or Vault
// Enterprise's) under the root, and returns this server as seen from
// inside it.
func (v *Vault) CreateNamespace(ctx context.Context, name string) (*Vault, error) {
	admin, err := v.AdminClient()
	if err != nil {
		return nil, err
	}
	if _, err := admin.Logical().WriteWithContext(ctx, "sys/namespaces/"+name, nil); err != nil {
		return nil, fmt.Errorf("create Vault namespace %s: %w", name, err)
	}
	return v.InNamespace(name), nil
}

// InNamespace is this server with every admin request sent into the Vault
// namespace ns (the X-Vault-Namespace header): the harness's setup helpers
// then configure that namespace.
func (v *Vault) InNamespace(ns string) *Vault {
	in := *v
	in.namespace = ns
	return &in
}

// ForgetRegistrationsOf removes the registrations (vko-cluster.*) of the
// cluster whose ID (its kube-system namespace's UID) is id, as its admin
// does once the cluster is gone: tests that start a cluster per test and
// reuse a cluster name on one Vault would otherwise meet the previous
// test's cluster under that name (ClusterNameClash).
func (v *Vault) ForgetRegistrationsOf(ctx context.Context, id string) error {
	admin, err := v.AdminClient()
	if err != nil {
		return err
	}
	names, err := admin.Sys().ListPoliciesWithContext(ctx)
	if err != nil {
		return err
	}
	for _, name := range names {
		if !strings.HasPrefix(name, vaultclient.RegistrationPrefix) {
			continue
		}
		text, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil {
			return err
		}
		if r, ok := vaultclient.ParseRegistration(text); ok && r.ID == id {
			if err := admin.Sys().DeletePolicyWithContext(ctx, name); err != nil {
				return err
			}
		}
	}
	return nil
}
