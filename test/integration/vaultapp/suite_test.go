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
	"fmt"
	"os"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

var (
	// op is the control plane with the manager and webhooks running.
	op *harness.Operator
	// vaultServer is this suite's own Vault: the outage test stops and
	// restarts it, which a Vault shared with other packages would not allow.
	vaultServer *harness.Vault
	// admin is a Vault client with the root token, standing for the
	// Vault administrator and for the checks of the tests.
	admin *vaultapi.Client
)

// testMaxBackoff keeps recovery after an outage quick in tests.
const testMaxBackoff = 2 * time.Second

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	logDir, err := os.MkdirTemp("", "vko-vault-suite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if vaultServer, err = harness.StartVaultUnderTest(ctx, logDir); err != nil {
		fmt.Fprintln(os.Stderr, "start Vault:", err)
		return 1
	}
	defer vaultServer.Stop()

	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token = vaultServer.Addr, vaultServer.Token
	if op, err = harness.StartOperator(manager.Options{Vault: cfg, MaxBackoff: testMaxBackoff}); err != nil {
		fmt.Fprintln(os.Stderr, "start operator:", err)
		return 1
	}
	defer op.Stop()
	if admin, err = vaultServer.AdminClient(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := prepareVault(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "prepare Vault:", err)
		return 1
	}
	return m.Run()
}

// prepareVault does what a Vault administrator does once: the Kubernetes
// auth method, pointed at this control plane. It is run again after the
// outage test restarts the (empty) dev server.
func prepareVault(ctx context.Context) error {
	return vaultServer.ConfigureKubernetesAuth(ctx, op.Client, op.Config)
}

// serviceAccountToken asks the API server for a token of the ServiceAccount,
// as the kubelet does for a pod.
func serviceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	return harness.ServiceAccountToken(ctx, op.Config, namespace, name)
}
