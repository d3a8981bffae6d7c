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

// ServerConfig says where a Keycloak is and how to log in to it.
type ServerConfig struct {
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
// changed credential replaces the cached server.
func (c ServerConfig) fingerprint() [32]byte {
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

// Pool holds one Server per KeycloakServer name, so that every reconcile of
// every resource using a server shares its token.
type Pool struct {
	mu      sync.Mutex
	servers map[string]*Server
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{servers: map[string]*Server{}} }

// Server returns the pooled server of that name, replacing it when its
// configuration changed.
func (p *Pool) Server(name string, cfg ServerConfig) (*Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[name]; ok && s.fingerprint == cfg.fingerprint() {
		return s, nil
	}
	s, err := newServer(name, cfg)
	if err != nil {
		return nil, err
	}
	p.servers[name] = s
	return s, nil
}

// Forget drops a server, when its KeycloakServer is deleted.
func (p *Pool) Forget(name string) {
	p.mu.Lock()
	delete(p.servers, name)
	p.mu.Unlock()
}

// Server talks to one Keycloak with one cached token.
type Server struct {
	name        string
	cfg         ServerConfig
	fingerprint [32]byte
	gc          *gocloak.GoCloak

	mu      sync.Mutex
	token   *gocloak.JWT
	renewAt time.Time

	// clientIDs maps realm and clientId to the client's internal id
	// (a knownID).
	clientIDs sync.Map
}

// DefaultRealm is the realm the operator logs in to when a server names
// none: Keycloak's admin realm.
const DefaultRealm = "master"

// LoginClientID is the client the operator logs in with: never one a
// tenant may read or rotate.
func (s *Server) LoginClientID() string {
	if s.cfg.Auth == Password {
		return "admin-cli"
	}
	return s.cfg.ClientID
}

func newServer(name string, cfg ServerConfig) (*Server, error) {
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
	return &Server{name: name, cfg: cfg, fingerprint: fingerprint, gc: gc}, nil
}

// accessToken returns the cached token, logging in when there is none or it
// is about to expire. Concurrent callers share one login.
func (s *Server) accessToken(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != nil && time.Now().Before(s.renewAt) {
		return s.token.AccessToken, nil
	}
	var (
		jwt *gocloak.JWT
		err error
	)
	switch s.cfg.Auth {
	case Password:
		jwt, err = s.gc.LoginAdmin(ctx, s.cfg.Username, s.cfg.Password, s.cfg.Realm)
	default:
		jwt, err = s.gc.LoginClient(ctx, s.cfg.ClientID, s.cfg.ClientSecret, s.cfg.Realm)
	}
	observe(s.name, OpLogin, err)
	if err != nil {
		s.token = nil
		if status(err) == http.StatusUnauthorized || status(err) == http.StatusBadRequest {
			return "", fmt.Errorf("log in to %s realm %q: %w: %w", s.cfg.URL, s.cfg.Realm, ErrUnauthorized, err)
		}
		return "", fmt.Errorf("log in to %s realm %q: %w", s.cfg.URL, s.cfg.Realm, err)
	}
	s.token = jwt
	s.renewAt = renewAt(time.Now(), time.Duration(jwt.ExpiresIn)*time.Second)
	return jwt.AccessToken, nil
}

// renewAt is when a token obtained at now, valid for lifetime, is replaced:
// a tenth of its lifetime before it expires, at most 5 s before. That is one
// token request per lifetime (Keycloak's master realm issues one-minute
// tokens), with room for a request in flight and a little clock skew; a
// token Keycloak refuses anyway is replaced after the 401 (see call).
func renewAt(now time.Time, lifetime time.Duration) time.Time {
	return now.Add(lifetime - min(5*time.Second, lifetime/10))
}

// forgetToken makes the next call log in: Keycloak answered 401 (the token
// was revoked, or Keycloak restarted and forgot its sessions).
func (s *Server) forgetToken() {
	s.mu.Lock()
	s.token = nil
	s.mu.Unlock()
}

// call runs fn with a valid token, and once more with a fresh one after a
// 401; a failure where Keycloak did not answer is marked ErrUnavailable.
func (s *Server) call(ctx context.Context, op string, fn func(token string) error) error {
	return markUnavailable(s.callOnce(ctx, op, fn))
}

func (s *Server) callOnce(ctx context.Context, op string, fn func(token string) error) error {
	for attempt := 0; ; attempt++ {
		token, err := s.accessToken(ctx)
		if err != nil {
			return err
		}
		err = fn(token)
		observe(s.name, op, err)
		if status(err) == http.StatusUnauthorized && attempt == 0 {
			s.forgetToken()
			continue
		}
		return err
	}
}

// Credential is a client's clientId and secret.
type Credential struct {
	ClientID string
	Secret   string
}

// ClientSecret reads the secret of the confidential client whose clientId is
// exactly clientID. An empty or masked secret is an error: it must never be
// written anywhere.
func (s *Server) ClientSecret(ctx context.Context, realm, clientID string) (Credential, error) {
	var cred *gocloak.CredentialRepresentation
	err := s.withClient(ctx, realm, clientID, func(id string) error {
		return s.call(ctx, OpReadSecret, func(token string) (err error) {
			cred, err = s.gc.GetClientSecret(ctx, token, realm, id)
			return err
		})
	})
	if errors.Is(err, ErrClientNotFound) {
		return Credential{}, err
	}
	if err != nil {
		return Credential{}, fmt.Errorf("read secret of client %q in realm %q: %w", clientID, realm, err)
	}
	if err := usable(cred); err != nil {
		return Credential{}, fmt.Errorf("secret of client %q in realm %q: %w", clientID, realm, err)
	}
	return Credential{ClientID: clientID, Secret: *cred.Value}, nil
}

// RegenerateSecret makes Keycloak issue a new secret for the client; the
// old one stops working at once.
func (s *Server) RegenerateSecret(ctx context.Context, realm, clientID string) error {
	err := s.withClient(ctx, realm, clientID, func(id string) error {
		return s.call(ctx, OpRegenerateSecret, func(token string) error {
			_, err := s.gc.RegenerateClientSecret(ctx, token, realm, id)
			return err
		})
	})
	if errors.Is(err, ErrClientNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("regenerate secret of client %q in realm %q: %w", clientID, realm, err)
	}
	return nil
}

// clientIDTTL is how long a looked-up client id is used. An id is the
// client's for life, but a clientId is not: an admin may rename a client
// and give its clientId to a new one, and the id must then be looked up
// again. Every resource reading a client shares the lookup, so a fleet of
// them costs one lookup per client per TTL.
const clientIDTTL = 30 * time.Second

type knownID struct {
	id string
	at time.Time
}

// withClient runs fn with the internal id of the client whose clientId is
// clientID, looked up at most clientIDTTL ago. A remembered id Keycloak no
// longer knows (the client was deleted) is looked up again at once.
func (s *Server) withClient(ctx context.Context, realm, clientID string, fn func(id string) error) error {
	key := realm + "\x00" + clientID
	if v, ok := s.clientIDs.Load(key); ok && time.Since(v.(knownID).at) < clientIDTTL {
		err := fn(v.(knownID).id)
		if status(err) != http.StatusNotFound {
			return err
		}
		s.clientIDs.Delete(key)
	}
	id, err := s.findClient(ctx, realm, clientID)
	if err != nil {
		return err
	}
	s.clientIDs.Store(key, knownID{id: id, at: time.Now()})
	return fn(id)
}

// findClient returns the internal id of the one client whose clientId is
// exactly clientID (Keycloak's search also matches on prefixes).
func (s *Server) findClient(ctx context.Context, realm, clientID string) (string, error) {
	var clients []*gocloak.Client
	err := s.call(ctx, OpFindClient, func(token string) (err error) {
		clients, err = s.gc.GetClients(ctx, token, realm, gocloak.GetClientsParams{ClientID: &clientID})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("find client %q in realm %q: %w", clientID, realm, err)
	}
	var ids []string
	for _, c := range clients {
		if gocloak.PString(c.ClientID) == clientID {
			ids = append(ids, gocloak.PString(c.ID))
		}
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("client %q in realm %q: %w (%d matches)", clientID, realm, ErrClientNotFound, len(ids))
	}
	return ids[0], nil
}

// Version returns the server's version, from the admin server info.
func (s *Server) Version(ctx context.Context) (string, error) {
	var info *gocloak.ServerInfoRepresentation
	err := s.call(ctx, OpServerInfo, func(token string) (err error) {
		info, err = s.gc.GetServerInfo(ctx, token)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("read server info of %s: %w", s.cfg.URL, err)
	}
	if info == nil || info.SystemInfo == nil {
		return "", nil
	}
	return gocloak.PString(info.SystemInfo.Version), nil
}

// IssuerURL is the realm's issuer, as tokens name it.
func (s *Server) IssuerURL(realm string) string {
	return strings.TrimRight(s.cfg.URL, "/") + "/realms/" + realm
}

// TokenURL is the realm's token endpoint.
func (s *Server) TokenURL(realm string) string {
	return s.IssuerURL(realm) + "/protocol/openid-connect/token"
}

// usable refuses what Keycloak sends instead of a secret: nothing, or the
// mask it shows to callers who may not see the value.
func usable(cred *gocloak.CredentialRepresentation) error {
	v := ""
	if cred != nil && cred.Value != nil {
		v = *cred.Value
	}
	switch {
	case v == "":
		return fmt.Errorf("%w: Keycloak returned an empty secret (is the client confidential?)", ErrNoUsableSecret)
	case strings.Trim(v, "*") == "":
		return fmt.Errorf("%w: Keycloak returned a masked secret; the operator's account may not view client secrets", ErrNoUsableSecret)
	}
	return nil
}

// status is the HTTP status of a gocloak error, or 0.
func status(err error) int {
	var apiErr *gocloak.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	return 0
}
