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

// Package vaultclient is the operator's only speaker of the Vault protocol: a thin
// layer over github.com/hashicorp/vault/api that logs in once, renews its
// token before it expires, and reads, compares and writes ACL policies and
// Kubernetes-auth roles. It knows nothing of Kubernetes objects.
package vaultclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
)

// Config says where Vault is and how the operator logs in.
type Config struct {
	// Address of Vault, for example https://vault.vault.svc:8200.
	Address string
	// Token, when set, is used as it is (local runs: VAULT_TOKEN).
	Token string
	// AuthMount is the Kubernetes auth mount the operator logs in through
	// when it has no Token, with its own ServiceAccount token.
	AuthMount string
	// AuthRole is the role it logs in with.
	AuthRole string
	// ServiceAccountTokenPath is where the ServiceAccount token is mounted.
	ServiceAccountTokenPath string
	// LoginAudience, when set, makes the login a JWT-auth one: AuthMount
	// is a JWT auth mount, and the operator logs in with a token of its
	// ServiceAccount that Tokens requests for this audience.
	LoginAudience string
	// Tokens requests the operator's ServiceAccount tokens (JWT login).
	Tokens TokenSource
	// KVMount is the KV version 2 mount whose <mount>/data/<namespace>/
	// prefix belongs to each namespace.
	KVMount string
	// KVPath is the path each namespace owns in KVMount, {namespace}
	// standing for the namespace; {namespace} alone when empty.
	KVPath string
	// KubernetesAuthMount is the auth mount where VaultApp roles are written.
	KubernetesAuthMount string
	// AppRoleAudience, when set, makes the VaultApps' roles JWT-auth roles
	// bound to this audience and to their ServiceAccounts' subjects;
	// KubernetesAuthMount is then a JWT auth mount.
	AppRoleAudience string
	// AppRoleIssuer, with AppRoleAudience, binds the JWT roles to tokens
	// of this issuer too (bound_claims iss): one mount may trust several
	// clusters, whose ServiceAccounts' subjects are alike. None when empty.
	AppRoleIssuer string
	// AppRoleKubernetesAudience, for Kubernetes-auth roles, is the
	// audience their tokens must carry (the role's audience). None when
	// empty.
	AppRoleKubernetesAudience string
	// Timeout of one request.
	Timeout time.Duration
	// Namespace is the Vault Enterprise or OpenBao namespace every request
	// goes to (the X-Vault-Namespace header); none when empty.
	Namespace string
	// CACert is a PEM bundle that verifies Vault's certificate; the
	// system's roots (or VAULT_CACERT) when empty.
	CACert []byte
	// Isolated ignores the process environment's Vault settings (agent
	// address, TLS, rate limit): a VaultServer says all there is of its
	// Vault, and VAULT_* variables meant for another must not reach it.
	Isolated bool
}

// ConfigFromEnv reads the standard VAULT_ADDR, VAULT_TOKEN and
// VAULT_NAMESPACE, with defaults for the rest.
func ConfigFromEnv() Config {
	return Config{
		Address:                 os.Getenv("VAULT_ADDR"),
		Token:                   os.Getenv("VAULT_TOKEN"),
		Namespace:               os.Getenv("VAULT_NAMESPACE"),
		AuthMount:               "kubernetes",
		AuthRole:                "vault-keycloak-operator",
		ServiceAccountTokenPath: "/var/run/secrets/kubernetes.io/serviceaccount/token",
		KVMount:                 "secret",
		KubernetesAuthMount:     "kubernetes",
		Timeout:                 10 * time.Second,
	}
}

// TokenSource gives a token of the operator's ServiceAccount for an
// audience (a Kubernetes TokenRequest).
type TokenSource interface {
	Token(ctx context.Context, audience string) (string, error)
}

// Client talks to one Vault. It is safe for concurrent use.
type Client struct {
	cfg Config
	api *vaultapi.Client
	// root is api outside any namespace, for sys/health: a server-wide
	// question OpenBao answers only in the root namespace ("operation
	// unavailable in namespaces"). It is made before any login and holds no
	// token: never use it for a request that needs one.
	root *vaultapi.Client

	mu sync.Mutex
	// renewAt is when the token must be renewed; zero for a token that
	// does not expire (a root or periodic token given in Token).
	renewAt time.Time
	// loggedIn is false until the first successful login.
	loggedIn bool
	// generation counts the logins, so that a request refused with an
	// older token does not throw away the one another request has just
	// logged in for.
	generation uint64
	// unclearRelogin is true once an unexplained refusal (see tokenGone)
	// had the operator log in, until Vault answers a lookup.
	unclearRelogin bool

	names names
}

// New returns a client; it does not contact Vault until first used.
func New(cfg Config) (*Client, error) {
	if cfg.Address == "" {
		return nil, errors.New("vault address is empty: set --vault-address or VAULT_ADDR")
	}
	apiCfg := vaultapi.DefaultConfig()
	apiCfg.Address = cfg.Address
	apiCfg.Timeout = cfg.Timeout
	// Retries belong to the controller's backoff, not to each request.
	apiCfg.MaxRetries = 0
	if cfg.Isolated {
		apiCfg.AgentAddress, apiCfg.Limiter = "", nil
		if t, ok := apiCfg.HttpClient.Transport.(*http.Transport); ok {
			t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
	}
	if len(cfg.CACert) > 0 {
		if err := apiCfg.ConfigureTLS(&vaultapi.TLSConfig{CACertBytes: cfg.CACert}); err != nil {
			return nil, fmt.Errorf("vault client for %s: CA bundle: %w", cfg.Address, err)
		}
	}
	c, err := vaultapi.NewClient(apiCfg)
	if err != nil {
		return nil, fmt.Errorf("vault client for %s: %w", cfg.Address, err)
	}
	// The api package reads VAULT_TOKEN and VAULT_NAMESPACE by itself;
	// both are set only from Config, so that what it says is what is used.
	c.ClearToken()
	c.ClearNamespace()
	if cfg.Namespace != "" {
		c.SetNamespace(cfg.Namespace)
	}
	return &Client{cfg: cfg, api: c, root: c.WithNamespace("")}, nil
}

// Config returns the client's configuration.
func (c *Client) Config() Config { return c.cfg }

// do runs one request with a valid token. A 403 is either a token Vault no
// longer knows (revoked behind the operator's back, or Vault restarted) or a
// policy that does not allow the request; only the first is cured by logging
// in again. Vault says which ("invalid token"); where its answer does not,
// it is asked about the token (one read). The operator logs in again only
// when the token is gone: a misconfigured policy never costs a login (one,
// where the token may not look itself up either, see tokenGone).
func (c *Client) do(ctx context.Context, op string, fn func() (found bool, err error)) error {
	return markUnavailable(c.doOnce(ctx, op, fn))
}

func (c *Client) doOnce(ctx context.Context, op string, fn func() (found bool, err error)) error {
	generation, err := c.ensureToken(ctx)
	if err != nil {
		return err
	}
	found, err := fn()
	var respErr *vaultapi.ResponseError
	if errors.As(err, &respErr) && respErr.StatusCode == http.StatusForbidden && c.cfg.Token == "" {
		observe(op, err, found)
		if !tokenInvalid(err) && !c.tokenGone(ctx, true) {
			return err
		}
		c.forgetToken(generation)
		if _, err := c.ensureToken(ctx); err != nil {
			return err
		}
		found, err = fn()
	}
	observe(op, err, found)
	return err
}
