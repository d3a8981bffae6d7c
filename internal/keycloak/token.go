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
	"fmt"
	"net/http"
	"time"

	"github.com/Nerzal/gocloak/v13"
)

// The admin token of one server: fetched once, renewed just before it
// expires, and every call made with it.

// accessToken returns the cached token, logging in when there is none or it
// is about to expire. Concurrent callers share one login.
func (c *Client) accessToken(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != nil && time.Now().Before(c.renewAt) {
		return c.token.AccessToken, nil
	}
	var (
		jwt *gocloak.JWT
		err error
	)
	switch c.cfg.Auth {
	case Password:
		jwt, err = c.gc.LoginAdmin(ctx, c.cfg.Username, c.cfg.Password, c.cfg.Realm)
	default:
		jwt, err = c.gc.LoginClient(ctx, c.cfg.ClientID, c.cfg.ClientSecret, c.cfg.Realm)
	}
	observe(c.name, OpLogin, err)
	if err != nil {
		c.token = nil
		if status(err) == http.StatusUnauthorized || status(err) == http.StatusBadRequest {
			return "", fmt.Errorf("log in to %s realm %q: %w: %w", c.cfg.URL, c.cfg.Realm, ErrUnauthorized, err)
		}
		return "", fmt.Errorf("log in to %s realm %q: %w", c.cfg.URL, c.cfg.Realm, err)
	}
	c.token = jwt
	c.renewAt = renewAt(time.Now(), time.Duration(jwt.ExpiresIn)*time.Second)
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
func (c *Client) forgetToken() {
	c.mu.Lock()
	c.token = nil
	c.mu.Unlock()
}

// call runs fn with a valid token, and once more with a fresh one after a
// 401; a failure where Keycloak did not answer is marked ErrUnavailable.
func (c *Client) call(ctx context.Context, op string, fn func(token string) error) error {
	return markUnavailable(c.callOnce(ctx, op, fn))
}

func (c *Client) callOnce(ctx context.Context, op string, fn func(token string) error) error {
	for attempt := 0; ; attempt++ {
		token, err := c.accessToken(ctx)
		if err != nil {
			return err
		}
		err = fn(token)
		observe(c.name, op, err)
		if status(err) == http.StatusUnauthorized && attempt == 0 {
			c.forgetToken()
			continue
		}
		return err
	}
}
