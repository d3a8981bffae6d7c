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
	"strconv"
	"sync"
	"time"

	"github.com/Nerzal/gocloak/v13"
)

// Rotation with a grace period: Keycloak's preview feature
// client-secret-rotation (off by default; kc.sh --features=client-secret-rotation)
// and a client policy whose profile holds the "secret-rotation" executor.
// Where both apply, regenerating a secret keeps the previous one valid as
// the client's "rotated" secret until the executor's
// rotated-expiration-period, or until it is invalidated. gocloak has no
// call for any of it, so these requests are made by hand.

// The names Keycloak gives the feature, the executor and the conditions
// this package can evaluate.
const (
	rotationFeature  = "CLIENT_SECRET_ROTATION"
	rotationExecutor = "secret-rotation"
	rotatedLifetime  = "rotated-expiration-period"
)

// Grace is what a realm offers the rotation of a confidential client.
type Grace struct {
	// Offered: a regenerated client's previous secret stays valid.
	Offered bool
	// Lifetime is how long Keycloak keeps the previous secret valid.
	Lifetime time.Duration
	// Why says what is missing when it is not offered.
	Why string
}

// featureCheck caches whether the server has the feature on: it changes
// only with a restart of Keycloak, and serverinfo is a large answer.
type featureCheck struct {
	mu sync.Mutex
	on bool
	at time.Time
}

const featureCheckTTL = 5 * time.Minute

// RotationGrace says whether regenerating a confidential client's secret in
// realm keeps the previous one valid, and for how long: the feature must be
// on, and an enabled client policy must apply the secret-rotation executor
// to every confidential client (conditions any-client or client-access-type
// confidential; a policy with another condition cannot be proven to apply,
// and is not counted).
func (c *Client) RotationGrace(ctx context.Context, realm string) (Grace, error) {
	on, err := c.rotationFeatureOn(ctx)
	if err != nil {
		return Grace{}, err
	}
	if !on {
		return Grace{Why: "Keycloak's feature client-secret-rotation is off (start it with --features=client-secret-rotation)"}, nil
	}
	var policies clientPolicies
	var profiles clientProfiles
	base := c.adminURL("realms", realm, "client-policies")
	for _, read := range []struct {
		what, url string
		into      any
	}{{"policies", base + "/policies?include-global-policies=true", &policies}, {"profiles", base + "/profiles?include-global-profiles=true", &profiles}} {
		err := c.getJSON(ctx, OpRotationPolicy, read.url, read.into)
		switch code := status(err); {
		case code == http.StatusForbidden || code == http.StatusNotFound:
			// Not a failure to retry: the account may not read them (or
			// this Keycloak has no client policies).
			return Grace{Why: fmt.Sprintf("the operator's account may not read the client %s of realm %q (it needs the view-realm role): %v", read.what, realm, err)}, nil
		case err != nil:
			return Grace{}, fmt.Errorf("read client %s of realm %q: %w", read.what, realm, err)
		}
	}
	return graceOf(policies, profiles), nil
}

func (c *Client) rotationFeatureOn(ctx context.Context) (bool, error) {
	c.features.mu.Lock()
	defer c.features.mu.Unlock()
	if !c.features.at.IsZero() && time.Since(c.features.at) < featureCheckTTL {
		return c.features.on, nil
	}
	var info struct {
		Features []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		} `json:"features"`
	}
	if err := c.getJSON(ctx, OpServerInfo, c.adminURL("serverinfo"), &info); err != nil {
		return false, fmt.Errorf("read server info of %s: %w", c.cfg.URL, err)
	}
	c.features.on = false
	for _, f := range info.Features {
		c.features.on = c.features.on || (f.Name == rotationFeature && f.Enabled)
	}
	c.features.at = time.Now()
	return c.features.on, nil
}

// SecretState is what Keycloak records of a client's secrets (never their
// values).
type SecretState struct {
	// Created is when the current secret was issued (compared only for
	// equality: a different value later says it was regenerated).
	Created string
	// CreatedAt is Created as a time (zero when Keycloak records none: a
	// secret set by the admin, not generated).
	CreatedAt time.Time
	// PreviousExpires is when Keycloak stops accepting the previous secret
	// (zero when it keeps none).
	PreviousExpires time.Time
}

// Attributes Keycloak keeps on a client, in Unix seconds of its clock.
const (
	secretCreationAttribute = "client.secret.creation.time"
	previousExpiryAttribute = "client.secret.rotated.expiration.time"
)

// SecretState reads the client's secret records. The client's
// representation also holds the previous secret's value (an attribute):
// only the two times are kept.
func (c *Client) SecretState(ctx context.Context, realm, clientID string) (SecretState, error) {
	var found *gocloak.Client
	err := c.withClient(ctx, realm, clientID, func(id string) error {
		return c.call(ctx, OpFindClient, func(token string) (err error) {
			found, err = c.gc.GetClient(ctx, token, realm, id)
			return err
		})
	})
	if errors.Is(err, ErrClientNotFound) {
		return SecretState{}, err
	}
	if err != nil {
		return SecretState{}, fmt.Errorf("read client %q in realm %q: %w", clientID, realm, err)
	}
	if found == nil || found.Attributes == nil {
		return SecretState{}, nil
	}
	attrs := *found.Attributes
	st := SecretState{Created: attrs[secretCreationAttribute]}
	if secs, err := strconv.ParseInt(st.Created, 10, 64); err == nil {
		st.CreatedAt = time.Unix(secs, 0)
	}
	if secs, err := strconv.ParseInt(attrs[previousExpiryAttribute], 10, 64); err == nil {
		st.PreviousExpires = time.Unix(secs, 0)
	}
	return st, nil
}

// PreviousSecret is the secret a rotation keeps valid, "" when the client
// has none (no rotation with grace, or it was invalidated or expired).
func (c *Client) PreviousSecret(ctx context.Context, realm, clientID string) (string, error) {
	var cred gocloak.CredentialRepresentation
	err := c.withClient(ctx, realm, clientID, func(id string) error {
		return c.getJSON(ctx, OpReadSecret, c.adminURL("realms", realm, "clients", id, "client-secret", "rotated"), &cred)
	})
	switch {
	case status(err) == http.StatusNotFound:
		return "", nil
	case errors.Is(err, ErrClientNotFound):
		return "", err
	case err != nil:
		return "", fmt.Errorf("read the previous secret of client %q in realm %q: %w", clientID, realm, err)
	}
	return gocloak.PString(cred.Value), nil
}

// InvalidatePreviousSecret ends the validity of the previous secret (a
// client without one is left as it is).
func (c *Client) InvalidatePreviousSecret(ctx context.Context, realm, clientID string) error {
	err := c.withClient(ctx, realm, clientID, func(id string) error {
		return c.call(ctx, OpInvalidatePrevious, func(token string) error {
			resp, err := c.gc.RestyClient().R().SetContext(ctx).SetAuthToken(token).
				Delete(c.adminURL("realms", realm, "clients", id, "client-secret", "rotated"))
			return answer(resp, err)
		})
	})
	if errors.Is(err, ErrClientNotFound) {
		return err
	}
	if err != nil {
		return fmt.Errorf("invalidate the previous secret of client %q in realm %q: %w", clientID, realm, err)
	}
	return nil
}
