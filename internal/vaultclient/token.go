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

package vaultclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	authk8s "github.com/hashicorp/vault/api/auth/kubernetes"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// ensureToken logs in on first use, and renews (or logs in again) when the
// token is close to its expiry: one login for the life of the token, never
// one per reconcile.
// It returns the token's generation.
func (c *Client) ensureToken(ctx context.Context) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loggedIn && (c.renewAt.IsZero() || time.Now().Before(c.renewAt)) {
		return c.generation, nil
	}
	if c.loggedIn && c.cfg.Token == "" {
		secret, err := c.api.Auth().Token().RenewSelfWithContext(ctx, 0)
		observe(OpRenew, err, true)
		if err == nil && secret != nil && secret.Auth != nil {
			c.setExpiry(secret.Auth.LeaseDuration)
			return c.generation, nil
		}
		// A token past its max TTL cannot be renewed: log in again.
	}
	if err := c.login(ctx); err != nil {
		return c.generation, fmt.Errorf("%w: %w", ErrLogin, err)
	}
	c.loggedIn = true
	c.generation++
	return c.generation, nil
}

func (c *Client) login(ctx context.Context) error {
	if c.cfg.Token != "" {
		c.api.SetToken(c.cfg.Token)
		secret, err := c.api.Auth().Token().LookupSelfWithContext(ctx)
		observe(OpLogin, err, true)
		if err != nil {
			return fmt.Errorf("look up the configured Vault token: %w", err)
		}
		ttl, _ := secret.TokenTTL()
		c.setExpiry(int(ttl.Seconds()))
		return nil
	}
	if c.cfg.LoginAudience != "" {
		return c.loginJWT(ctx)
	}
	auth, err := authk8s.NewKubernetesAuth(c.cfg.AuthRole,
		authk8s.WithMountPath(c.cfg.AuthMount),
		authk8s.WithServiceAccountTokenPath(c.cfg.ServiceAccountTokenPath))
	if err != nil {
		return fmt.Errorf("vault kubernetes auth: %w", err)
	}
	secret, err := c.api.Auth().Login(ctx, auth)
	observe(OpLogin, err, true)
	if err != nil {
		return fmt.Errorf("log in to Vault through auth/%s as role %q: %w", c.cfg.AuthMount, c.cfg.AuthRole, err)
	}
	if secret == nil || secret.Auth == nil {
		return fmt.Errorf("log in to Vault through auth/%s: no token in the answer", c.cfg.AuthMount)
	}
	c.setExpiry(secret.Auth.LeaseDuration)
	return nil
}

// loginJWT logs in through a JWT auth mount with a token of the
// operator's ServiceAccount requested for the login's audience.
func (c *Client) loginJWT(ctx context.Context) error {
	if c.cfg.Tokens == nil {
		return fmt.Errorf("log in to Vault through auth/%s: no source of ServiceAccount tokens", c.cfg.AuthMount)
	}
	jwt, err := c.cfg.Tokens.Token(ctx, c.cfg.LoginAudience)
	if err != nil {
		return fmt.Errorf("log in to Vault through auth/%s: ServiceAccount token for audience %q: %w", c.cfg.AuthMount, c.cfg.LoginAudience, err)
	}
	secret, err := c.api.Logical().WriteWithContext(ctx, "auth/"+c.cfg.AuthMount+"/login", map[string]any{"role": c.cfg.AuthRole, "jwt": jwt})
	observe(OpLogin, err, true)
	if err != nil {
		return fmt.Errorf("log in to Vault through auth/%s as role %q: %w", c.cfg.AuthMount, c.cfg.AuthRole, err)
	}
	if secret == nil || secret.Auth == nil {
		return fmt.Errorf("log in to Vault through auth/%s: no token in the answer", c.cfg.AuthMount)
	}
	c.api.SetToken(secret.Auth.ClientToken)
	c.setExpiry(secret.Auth.LeaseDuration)
	return nil
}

// setExpiry schedules renewal at two thirds of the token's TTL.
func (c *Client) setExpiry(ttlSeconds int) {
	if ttlSeconds <= 0 {
		c.renewAt = time.Time{}
		return
	}
	c.renewAt = time.Now().Add(time.Duration(ttlSeconds) * time.Second * 2 / 3)
}

// tokenGone asks Vault about the operator's token: gone when Vault does
// not know it. A request refused and the token's lookup refused too,
// neither saying "invalid token", is either a token Vault refuses whatever
// the policy (its identity entity deleted or disabled) or a policy without
// auth/token/lookup-self. One login tells them apart: it cures the first
// (a login makes a new entity), and a fresh token refused the same way is
// the second, which no further login cures until Vault answers a lookup
// again. A mere check (afterRefusal false) never counts a refused lookup.
func (c *Client) tokenGone(ctx context.Context, afterRefusal bool) bool {
	_, err := c.api.Auth().Token().LookupSelfWithContext(ctx)
	observe(OpLookupSelf, err, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil:
		c.unclearRelogin = false
		return false
	case Forbidden(err) && !tokenInvalid(err):
		if !afterRefusal || c.unclearRelogin {
			return false
		}
		c.unclearRelogin = true
		logf.FromContext(ctx).Info("Vault refused a request and the token's own lookup without saying why: logging in again, once",
			"vault", c.cfg.Address)
		return true
	default:
		c.unclearRelogin = false
		return true
	}
}

// tokenInvalid reports whether Vault refused a request because it does not
// know the token (revoked, expired, or Vault restarted): Vault adds
// "invalid token" to its "permission denied" then, and only then.
func tokenInvalid(err error) bool {
	var respErr *vaultapi.ResponseError
	return errors.As(err, &respErr) && slices.ContainsFunc(respErr.Errors, func(e string) bool {
		return strings.Contains(e, "invalid token")
	})
}

// forgetToken makes the next call log in again, unless the token of
// generation is already replaced; used when Vault says the token is no
// longer valid (revoked by hand, or Vault restarted).
func (c *Client) forgetToken(generation uint64) {
	c.mu.Lock()
	if c.generation == generation {
		c.loggedIn = false
	}
	c.mu.Unlock()
}
