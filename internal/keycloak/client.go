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

// Package keycloak is the operator's only speaker of the Keycloak admin
// protocol: a thin layer over github.com/Nerzal/gocloak/v13 that keeps one
// token per server (renewed before it expires, or after a 401), finds a
// client by its clientId, and reads or regenerates its secret.
package keycloak

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/Nerzal/gocloak/v13"
)

// AuthType is how the operator logs in.
type AuthType string

const (
	// ClientCredentials logs in as a service-account client.
	ClientCredentials AuthType = "ClientCredentials"
	// Password logs in as an admin user through admin-cli.
	Password AuthType = "Password"
)

// Config says where a Keycloak is and how to log in to it.
type Config struct {
	URL   string
	Realm string
	Auth  AuthType
	// ClientID and ClientSecret, for ClientCredentials.
	ClientID, ClientSecret string
	// Username and Password, for Password.
	Username, Password string
	// CABundle verifies the server's certificate, when set.
	CABundle []byte
	// Timeout of one request.
	Timeout time.Duration
}

// fingerprint identifies a configuration without holding its secrets, so a
// changed credential replaces the cached client.
func (c Config) fingerprint() [32]byte {
	return sha256.Sum256([]byte(strings.Join([]string{
		c.URL, c.Realm, string(c.Auth), c.ClientID, c.ClientSecret, c.Username, c.Password, string(c.CABundle), c.Timeout.String(),
	}, "\x00")))
}

// Errors a caller can tell apart.
var (
	// ErrClientNotFound: no client, or more than one, has the clientId.
	ErrClientNotFound = errors.New("client not found")
	// ErrNoUsableSecret: Keycloak answered with an empty or masked secret.
	ErrNoUsableSecret = errors.New("no usable secret")
	// ErrUnauthorized: Keycloak refused the operator's credentials.
	ErrUnauthorized = errors.New("credentials refused")
)

// Pool holds one Client per KeycloakServer name, so that every reconcile of
// every resource using a server shares its token.
type Pool struct {
	mu      sync.Mutex
	clients map[string]*Client
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{clients: map[string]*Client{}} }

// Client returns the pooled client of that name, replacing it when its
// configuration changed.
func (p *Pool) Client(name string, cfg Config) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.clients[name]; ok && c.fingerprint == cfg.fingerprint() {
		return c, nil
	}
	c, err := newClient(name, cfg)
	if err != nil {
		return nil, err
	}
	p.clients[name] = c
	return c, nil
}

// Forget drops the client of a KeycloakServer that was deleted.
func (p *Pool) Forget(name string) {
	p.mu.Lock()
	delete(p.clients, name)
	p.mu.Unlock()
}

// Client talks to one Keycloak server with one cached token.
type Client struct {
	name        string
	cfg         Config
	fingerprint [32]byte
	gc          *gocloak.GoCloak

	mu      sync.Mutex
	token   *gocloak.JWT
	renewAt time.Time

	// clientIDs maps realm and clientId to the client's internal id
	// (a knownID).
	clientIDs sync.Map
	// features remembers whether secret rotation is on.
	features featureCheck
}

// DefaultRealm is the realm the operator logs in to when a server names
// none: Keycloak's admin realm.
const DefaultRealm = "master"

// LoginClientID is the client the operator logs in with: never one a
// tenant may read or rotate.
func (c *Client) LoginClientID() string {
	if c.cfg.Auth == Password {
		return "admin-cli"
	}
	return c.cfg.ClientID
}

func newClient(name string, cfg Config) (*Client, error) {
	// The fingerprint is of the configuration as given, before defaults, so
	// that the pool finds this server again for the same KeycloakServer.
	fingerprint := cfg.fingerprint()
	if cfg.Realm == "" {
		cfg.Realm = DefaultRealm
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	gc := gocloak.NewClient(strings.TrimRight(cfg.URL, "/"))
	rc := gc.RestyClient()
	rc.SetTimeout(cfg.Timeout)
	// Retries belong to the controller's backoff.
	rc.SetRetryCount(0)
	if len(cfg.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, fmt.Errorf("keycloak server %s: caBundle holds no PEM certificate", name)
		}
		rc.SetTLSClientConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	}
	return &Client{name: name, cfg: cfg, fingerprint: fingerprint, gc: gc}, nil
}

// Version returns the server's version, from the admin server info.
func (c *Client) Version(ctx context.Context) (string, error) {
	var info *gocloak.ServerInfoRepresentation
	err := c.call(ctx, OpServerInfo, func(token string) (err error) {
		info, err = c.gc.GetServerInfo(ctx, token)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("read server info of %s: %w", c.cfg.URL, err)
	}
	if info == nil || info.SystemInfo == nil {
		return "", nil
	}
	return gocloak.PString(info.SystemInfo.Version), nil
}

// IssuerURL is the realm's issuer, as tokens name it.
func (c *Client) IssuerURL(realm string) string { return IssuerURLAt(c.cfg.URL, realm) }

// IssuerURLAt is the issuer of a realm of the Keycloak at baseURL.
func IssuerURLAt(baseURL, realm string) string {
	return strings.TrimRight(baseURL, "/") + "/realms/" + realm
}

// TokenURL is the realm's token endpoint.
func (c *Client) TokenURL(realm string) string { return TokenURLAt(c.cfg.URL, realm) }

// TokenURLAt is the token endpoint of a realm of the Keycloak at baseURL.
func TokenURLAt(baseURL, realm string) string {
	return IssuerURLAt(baseURL, realm) + "/protocol/openid-connect/token"
}

// Forbidden reports whether Keycloak refused a request of the operator's
// logged-in client for want of a right (403): a role of the realm's
// realm-management client that the admin did not grant.
func Forbidden(err error) bool { return status(err) == http.StatusForbidden }

// status is the HTTP status of a gocloak error, or 0.
func status(err error) int {
	var apiErr *gocloak.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	return 0
}
