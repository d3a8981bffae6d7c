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

package secrets

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// Keys of the KeycloakServer credentials Secret.
const (
	CredentialClientID     = "clientId"
	CredentialClientSecret = "clientSecret"
	CredentialUsername     = "username"
	CredentialPassword     = "password"
)

// errCredentials marks a KeycloakServer whose credentials Secret is missing
// or incomplete: the admin must act, retrying sooner does not help.
var errCredentials = errors.New("credentials unusable")

// ClientSource turns a KeycloakServer into its pooled keycloak.Client.
type ClientSource struct {
	// Reader reads the credentials Secret straight from the API server:
	// the cache holds only the Secrets the operator owns.
	Reader client.Reader
	// Namespace is the operator's own namespace, where credentials live.
	Namespace string
	Pool      *keycloak.Pool
	// Metadata, when set, is the cache that watches the metadata of the
	// credentials Secrets: the Secret itself is read again only when its
	// resourceVersion moved, not on every reconcile.
	Metadata client.Reader

	mu    sync.Mutex
	known map[client.ObjectKey]knownCredentials
}

// knownCredentials is a credentials Secret's data as last read, and the
// resourceVersion it was read at.
type knownCredentials struct {
	resourceVersion string
	data            map[string][]byte
}

// Client returns the pooled client of a KeycloakServer, built from its spec
// and its credentials Secret.
func (s *ClientSource) Client(ctx context.Context, server *secretsv1beta1.KeycloakServer) (KeycloakAPI, error) {
	key := client.ObjectKey{Namespace: s.Namespace, Name: server.Spec.CredentialsSecretRef.Name}
	creds, err := s.credentials(ctx, key)
	if err != nil {
		return nil, err
	}
	cfg := keycloak.Config{
		URL:      server.Spec.URL,
		Realm:    server.Spec.Realm,
		Auth:     keycloak.AuthType(server.Spec.AuthType),
		CABundle: server.Spec.CABundle,
	}
	need := []string{CredentialClientID, CredentialClientSecret}
	if cfg.Auth == keycloak.Password {
		need = []string{CredentialUsername, CredentialPassword}
	} else {
		cfg.Auth = keycloak.ClientCredentials
	}
	for _, k := range need {
		if len(creds.Data[k]) == 0 {
			return nil, fmt.Errorf("%w: Secret %s has no %q key (authType %s needs %q and %q)", errCredentials, key, k, cfg.Auth, need[0], need[1])
		}
	}
	cfg.ClientID, cfg.ClientSecret = string(creds.Data[CredentialClientID]), string(creds.Data[CredentialClientSecret])
	cfg.Username, cfg.Password = string(creds.Data[CredentialUsername]), string(creds.Data[CredentialPassword])
	kc, err := s.Pool.Client(server.Name, cfg)
	if err != nil {
		return nil, err
	}
	return kc, nil
}

// credentials returns the data of the credentials Secret: as last read when
// the metadata cache shows the same resourceVersion, else read again.
func (s *ClientSource) credentials(ctx context.Context, key client.ObjectKey) (*corev1.Secret, error) {
	rv := ""
	if s.Metadata != nil {
		meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
		if err := s.Metadata.Get(ctx, key, meta); err == nil {
			rv = meta.ResourceVersion
		}
		s.mu.Lock()
		known, ok := s.known[key]
		s.mu.Unlock()
		if ok && rv != "" && known.resourceVersion == rv {
			return &corev1.Secret{Data: known.data}, nil
		}
	}
	var creds corev1.Secret
	if err := s.Reader.Get(ctx, key, &creds); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: Secret %s not found in the operator's namespace", errCredentials, key)
		}
		return nil, fmt.Errorf("read credentials Secret %s: %w", key, err)
	}
	if s.Metadata != nil {
		s.mu.Lock()
		if s.known == nil {
			s.known = map[client.ObjectKey]knownCredentials{}
		}
		s.known[key] = knownCredentials{resourceVersion: creds.ResourceVersion, data: creds.Data}
		s.mu.Unlock()
	}
	return &creds, nil
}

// Forget drops the pooled client (and its token) of a deleted server.
func (s *ClientSource) Forget(name string) { s.Pool.Forget(name) }
