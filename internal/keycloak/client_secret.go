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

package keycloak

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Nerzal/gocloak/v13"
)

// What is read and written of one client: its secret, found by clientId.

// Credential is a client's clientId and secret, and the previous secret
// while a rotation keeps it valid (read only when asked for).
type Credential struct {
	ClientID string
	Secret   string
	Previous string
}

// ClientSecret reads the secret of the confidential client whose clientId is
// exactly clientID. An empty or masked secret is an error: it must never be
// written anywhere.
func (c *Client) ClientSecret(ctx context.Context, realm, clientID string) (Credential, error) {
	var cred *gocloak.CredentialRepresentation
	err := c.withClient(ctx, realm, clientID, func(id string) error {
		return c.call(ctx, OpReadSecret, func(token string) (err error) {
			cred, err = c.gc.GetClientSecret(ctx, token, realm, id)
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
// old one stops working at once, unless the realm rotates secrets with a
// grace period (see RotationGrace).
func (c *Client) RegenerateSecret(ctx context.Context, realm, clientID string) error {
	err := c.withClient(ctx, realm, clientID, func(id string) error {
		return c.call(ctx, OpRegenerateSecret, func(token string) error {
			_, err := c.gc.RegenerateClientSecret(ctx, token, realm, id)
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
func (c *Client) withClient(ctx context.Context, realm, clientID string, fn func(id string) error) error {
	key := realm + "\x00" + clientID
	if v, ok := c.clientIDs.Load(key); ok && time.Since(v.(knownID).at) < clientIDTTL {
		err := fn(v.(knownID).id)
		if status(err) != http.StatusNotFound {
			return err
		}
		c.clientIDs.Delete(key)
	}
	id, err := c.findClient(ctx, realm, clientID)
	if err != nil {
		return err
	}
	c.clientIDs.Store(key, knownID{id: id, at: time.Now()})
	return fn(id)
}

// findClient returns the internal id of the one client whose clientId is
// exactly clientID (Keycloak's search also matches on prefixes).
func (c *Client) findClient(ctx context.Context, realm, clientID string) (string, error) {
	var clients []*gocloak.Client
	err := c.call(ctx, OpFindClient, func(token string) (err error) {
		clients, err = c.gc.GetClients(ctx, token, realm, gocloak.GetClientsParams{ClientID: &clientID})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("find client %q in realm %q: %w", clientID, realm, err)
	}
	var ids []string
	for _, found := range clients {
		if gocloak.PString(found.ClientID) == clientID {
			ids = append(ids, gocloak.PString(found.ID))
		}
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("client %q in realm %q: %w (%d matches)", clientID, realm, ErrClientNotFound, len(ids))
	}
	return ids[0], nil
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
