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

	vaultapi "github.com/hashicorp/vault/api"
)

// StartPersistentVault starts a Vault server as a cluster runs it, not in
// dev mode: its data in files under dir, initialized with a single unseal
// key, unsealed, with the KV version 2 mount "secret" a dev server has. It
// keeps everything across StopServer and StartSealed, and comes back
// sealed, as a real Vault does after a restart, until Unseal.
func StartPersistentVault(ctx context.Context, dir string) (*Vault, error) {
	bin := os.Getenv(EnvVaultBin)
	if err := requireFile(bin, "vault server", EnvVaultBin); err != nil {
		return nil, err
	}
	v := &Vault{bin: bin, logDir: dir, name: "vault", dataDir: filepath.Join(dir, "vault-data")}
	err := retryWhilePortTaken(func() (*Process, error) {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		v.port, v.Addr = port, "http://127.0.0.1:"+strconv.Itoa(port)
		err = v.StartSealed(ctx)
		return v.proc, err
	})
	if err != nil {
		return nil, err
	}
	admin, err := v.AdminClient()
	if err != nil {
		v.Stop()
		return nil, err
	}
	initialized, err := admin.Sys().InitWithContext(ctx, &vaultapi.InitRequest{SecretShares: 1, SecretThreshold: 1})
	if err != nil {
		v.Stop()
		return nil, fmt.Errorf("initialize vault: %w", err)
	}
	v.Token, v.unsealKey = initialized.RootToken, initialized.Keys[0]
	if err := v.Unseal(ctx); err != nil {
		v.Stop()
		return nil, err
	}
	if admin, err = v.AdminClient(); err == nil {
		err = admin.Sys().MountWithContext(ctx, "secret", &vaultapi.MountInput{Type: "kv", Options: map[string]string{"version": "2"}})
	}
	if err != nil {
		v.Stop()
		return nil, fmt.Errorf("mount secret/: %w", err)
	}
	return v, nil
}

// StartSealed starts the server again on the same address and data after
// Stop; it answers, sealed, until Unseal.
func (v *Vault) StartSealed(ctx context.Context) error {
	if v.dataDir == "" {
		return fmt.Errorf("vault at %s keeps no data: only StartPersistentVault's servers restart sealed", v.Addr)
	}
	config := filepath.Join(v.logDir, "vault.hcl")
	text := fmt.Sprintf(`storage "file" { path = %q }
listener "tcp" {
  address     = "127.0.0.1:%d"
  tls_disable = true
}
disable_mlock = true
api_addr      = %q
`, v.dataDir, v.port, v.Addr)
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		return err
	}
	var err error
	v.proc, err = start(v.name, v.logDir, withoutVaultEnv("HOME="+v.logDir), v.bin, "server", "-config="+config)
	if err != nil {
		return err
	}
	// sys/seal-status answers 200 sealed or not.
	if err := v.proc.waitHTTP(ctx, v.Addr+"/v1/sys/seal-status"); err != nil {
		v.proc.Stop()
		return err
	}
	return nil
}

// Unseal gives the server its key and waits until it is active.
func (v *Vault) Unseal(ctx context.Context) error {
	admin, err := v.AdminClient()
	if err != nil {
		return err
	}
	if _, err := admin.Sys().UnsealWithContext(ctx, v.unsealKey); err != nil {
		return fmt.Errorf("unseal vault: %w", err)
	}
	return v.proc.waitHTTP(ctx, v.Addr+"/v1/sys/health")
}
