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

package vault

import (
	"context"
	"crypto/x509"
	"fmt"
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// DefaultCAKey is the key of a VaultServer's caSecretRef when none is named.
const DefaultCAKey = "ca.crt"

// ServerClient is a VaultServer's client: what the VaultApp controller
// writes through, and the VaultServer controller's check.
type ServerClient interface {
	VaultAPI
	// Check reports what the server says of itself (product, version),
	// and whether it answers and the operator can log in.
	Check(ctx context.Context) (vaultclient.ServerInfo, error)
	registrar
}

var _ ServerClient = (*vaultclient.Client)(nil)

// ServerClients keeps one Vault client per VaultServer, built again only
// when what the client is made of changes: a token lives as long as its
// client, so a check is not a login.
type ServerClients struct {
	// Reader reads a caSecretRef's Secret from the API server.
	Reader client.Reader
	// Namespace is the operator's namespace, where CA Secrets are.
	Namespace string
	// Base is what every server's client starts from: the ServiceAccount
	// token path and the request timeout.
	Base vaultclient.Config
	// Tokens requests the operator's ServiceAccount tokens for a
	// VaultServer's JWT login.
	Tokens vaultclient.TokenSource
	// Issuer is the issuer of this cluster's ServiceAccount tokens: what
	// JWT app roles bind when the VaultServer names none. None is bound
	// when nil.
	Issuer func() (string, error)
	// Audience is the audience of this cluster's own ServiceAccount
	// tokens: what Kubernetes-auth app roles bind when the VaultServer
	// names none. None is bound when nil.
	Audience func() (string, error)
	// New builds a client; vaultclient.New when nil.
	New func(vaultclient.Config) (ServerClient, error)

	mu      sync.Mutex
	clients map[string]serverClient
}

type serverClient struct {
	cfg    vaultclient.Config
	client ServerClient
}

// ConfigOf is the client configuration a VaultServer says, with its CA.
func ConfigOf(base vaultclient.Config, s *vaultv1beta1.VaultServer, ca []byte) vaultclient.Config {
	cfg := base
	cfg.Address, cfg.Namespace, cfg.CACert, cfg.Token, cfg.Isolated = s.Spec.Address, s.Spec.Namespace, ca, "", true
	switch login := s.Spec.Login; {
	case login.JWT != nil:
		cfg.AuthMount, cfg.AuthRole, cfg.LoginAudience = login.JWT.Mount, login.JWT.Role, login.JWT.Audience
	case login.Kubernetes != nil:
		cfg.AuthMount, cfg.AuthRole, cfg.LoginAudience = login.Kubernetes.Mount, login.Kubernetes.Role, ""
	}
	cfg.KVMount, cfg.KVPath = tenancy.KVMountOf(s), tenancy.KVPathOf(s)
	switch app := s.Spec.AppAuth; {
	case app.JWT != nil:
		cfg.KubernetesAuthMount, cfg.AppRoleAudience, cfg.AppRoleIssuer = app.JWT.Mount, app.JWT.Audience, app.JWT.Issuer
	case app.Kubernetes != nil:
		cfg.KubernetesAuthMount, cfg.AppRoleAudience, cfg.AppRoleKubernetesAudience = app.Kubernetes.Mount, "", app.Kubernetes.Audience
	}
	return cfg
}

// For returns the client of a server, building it when the server changed.
func (c *ServerClients) For(ctx context.Context, s *vaultv1beta1.VaultServer) (ServerClient, error) {
	ca, err := c.caOf(ctx, s)
	if err != nil {
		return nil, err
	}
	cfg := ConfigOf(c.Base, s, ca)
	cfg.Tokens = c.Tokens
	if cfg.AppRoleIssuer, err = c.AppRoleIssuer(s); err != nil {
		return nil, err
	}
	if cfg.AppRoleKubernetesAudience, err = c.AppRoleKubernetesAudience(s); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if have, ok := c.clients[s.Name]; ok && reflect.DeepEqual(have.cfg, cfg) {
		return have.client, nil
	}
	newClient := c.New
	if newClient == nil {
		newClient = func(cfg vaultclient.Config) (ServerClient, error) { return vaultclient.New(cfg) }
	}
	vc, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	if c.clients == nil {
		c.clients = map[string]serverClient{}
	}
	c.clients[s.Name] = serverClient{cfg: cfg, client: vc}
	return vc, nil
}

// AppRoleIssuer is the issuer a server's JWT app roles bind: the one it
// names, else this cluster's; none for Kubernetes-auth roles.
func (c *ServerClients) AppRoleIssuer(s *vaultv1beta1.VaultServer) (string, error) {
	jwt := s.Spec.AppAuth.JWT
	return ownTokensUnlessNamed(jwt != nil && jwt.Issuer == "", ConfigOf(vaultclient.Config{}, s, nil).AppRoleIssuer, c.Issuer,
		"the issuer JWT app roles bind (set spec.appAuth.jwt.issuer")
}

// AppRoleKubernetesAudience is the audience a server's Kubernetes-auth app
// roles bind: the one it names, else this cluster's tokens'; none for JWT
// roles (their audience is spec.appAuth.jwt.audience).
func (c *ServerClients) AppRoleKubernetesAudience(s *vaultv1beta1.VaultServer) (string, error) {
	k := s.Spec.AppAuth.Kubernetes
	return ownTokensUnlessNamed(k != nil && k.Audience == "", ConfigOf(vaultclient.Config{}, s, nil).AppRoleKubernetesAudience, c.Audience,
		"the audience Kubernetes-auth app roles bind (set spec.appAuth.kubernetes.audience")
}

// ownTokensUnlessNamed is a binding the server names, or, where it names
// none (defaulted), what the cluster's own tokens carry (from; none when
// nil). what names the binding and its field, for the error.
func ownTokensUnlessNamed(defaulted bool, named string, from func() (string, error), what string) (string, error) {
	if !defaulted || from == nil {
		return named, nil
	}
	v, err := from()
	if err != nil {
		return "", fmt.Errorf("tell %s, or mount the operator's ServiceAccount token): %w", what, err)
	}
	return v, nil
}

// Bindings are the issuer and audience the app roles of a server's client
// bind, as For resolved them (no token read again); empty before For
// built its client.
func (c *ServerClients) Bindings(name string) (issuer, audience string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.clients[name].cfg
	return cfg.AppRoleIssuer, cfg.AppRoleKubernetesAudience
}

// Forget drops the client of a server that is gone.
func (c *ServerClients) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.clients, name)
}

// errCA is a CA the operator cannot read: configuration, not an outage.
type errCA struct{ err error }

func (e *errCA) Error() string { return e.err.Error() }
func (e *errCA) Unwrap() error { return e.err }

func (c *ServerClients) caOf(ctx context.Context, s *vaultv1beta1.VaultServer) ([]byte, error) {
	ref := s.Spec.CASecretRef
	if ref == nil {
		return s.Spec.CABundle, nil
	}
	key := ref.Key
	if key == "" {
		key = DefaultCAKey
	}
	var secret corev1.Secret
	switch err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ref.Name}, &secret); {
	case apierrors.IsNotFound(err):
		return nil, &errCA{fmt.Errorf("read the CA Secret %s/%s: %w", c.Namespace, ref.Name, err)}
	case err != nil:
		// Not the CA's fault: retried with backoff.
		return nil, fmt.Errorf("read the CA Secret %s/%s: %w", c.Namespace, ref.Name, err)
	}
	ca := secret.Data[key]
	if len(ca) == 0 {
		return nil, &errCA{fmt.Errorf("the CA Secret %s/%s has no key %q", c.Namespace, ref.Name, key)}
	}
	if !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return nil, &errCA{fmt.Errorf("key %q of the CA Secret %s/%s holds no PEM-encoded certificate", key, c.Namespace, ref.Name)}
	}
	return ca, nil
}
