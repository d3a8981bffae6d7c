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
	"sync"
	"sync/atomic"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	"k8s.io/client-go/rest"
)

// authJWT is the JWT auth method's type, its roles' role_type, and the
// field a login's token goes in.
const authJWT = "jwt"

// VaultConsumer is a workload of a VaultApp: on a period it logs in to
// Vault with its ServiceAccount's token, as a pod does at start, and reads
// its secret with the token it got. A role or a policy missing for a
// moment shows in Failures.
type VaultConsumer struct {
	Logins, Failures atomic.Int64
	// FirstFailure is the first failure's error, for the test's log.
	FirstFailure atomic.Value

	stop context.CancelFunc
	done sync.WaitGroup
}

// VaultConsumerOptions say who the workload is and what it reads.
type VaultConsumerOptions struct {
	Vault *Vault
	// Config reaches the API server that issues the ServiceAccount's
	// tokens.
	Config                    *rest.Config
	Namespace, ServiceAccount string
	// LoginPath is the auth mount's login path; Role the VaultApp's role.
	LoginPath, Role string
	// Read is the KV path read with the token (secret/data/...).
	Read  string
	Every time.Duration
}

// StartVaultConsumer starts the workload; it fails at once when its first
// login or read does.
func StartVaultConsumer(ctx context.Context, o VaultConsumerOptions) (*VaultConsumer, error) {
	saToken, err := ServiceAccountToken(ctx, o.Config, o.Namespace, o.ServiceAccount)
	if err != nil {
		return nil, err
	}
	KeepSecret(saToken)
	// The body of a login on a Kubernetes or a JWT auth mount alike.
	loginBody := map[string]any{"role": o.Role, authJWT: saToken}
	cfg := vaultapi.DefaultConfig()
	cfg.Address = o.Vault.Addr
	vc, err := vaultapi.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	vc.ClearToken()
	once := func(ctx context.Context) error {
		login, err := vc.Logical().WriteWithContext(ctx, o.LoginPath, loginBody)
		if err != nil {
			return fmt.Errorf("log in at %s as %s: %w", o.LoginPath, o.Role, err)
		}
		if login == nil || login.Auth == nil {
			return fmt.Errorf("log in at %s as %s: no token", o.LoginPath, o.Role)
		}
		c, err := vc.Clone()
		if err != nil {
			return err
		}
		c.SetToken(login.Auth.ClientToken)
		if s, err := c.Logical().ReadWithContext(ctx, o.Read); err != nil || s == nil {
			return fmt.Errorf("read %s: %v (found %v)", o.Read, err, s != nil)
		}
		return nil
	}
	if err := once(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &VaultConsumer{stop: cancel}
	c.done.Go(func() {
		for ctx.Err() == nil {
			time.Sleep(o.Every)
			c.Logins.Add(1)
			if err := once(ctx); err != nil && ctx.Err() == nil {
				if c.Failures.Add(1) == 1 {
					c.FirstFailure.Store(err.Error())
				}
			}
		}
	})
	return c, nil
}

// Stop ends the workload and waits for it.
func (c *VaultConsumer) Stop() { c.stop(); c.done.Wait() }
