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
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/Nerzal/gocloak/v13"
)

// ErrUnavailable marks a failure where the Keycloak server did not answer,
// rather than refused: nothing listens, the connection broke or timed out,
// or it answered 5xx. Such a failure is cured by Keycloak coming back. Only
// this client's requests to Keycloak are marked: a Kubernetes API error or
// a refusal never is.
var ErrUnavailable = errors.New("no answer")

// Unavailable reports whether err is marked ErrUnavailable.
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// markUnavailable marks err when it is one of Keycloak not answering.
func markUnavailable(err error) error {
	if err == nil || Unavailable(err) || !notAnswering(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// notAnswering: a 5xx, or a transport failure. gocloak turns a transport
// failure into an APIError without a status, keeping only its text: a
// certificate or a name that does not resolve is told from it by that
// text, since waiting cures neither.
func notAnswering(err error) bool {
	var apiErr *gocloak.APIError
	if errors.As(err, &apiErr) {
		if apiErr.Code != 0 {
			return apiErr.Code >= http.StatusInternalServerError
		}
		for _, configuration := range []string{"x509:", "tls:", "no such host"} {
			if strings.Contains(apiErr.Message, configuration) {
				return false
			}
		}
		return true
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr)
}

// Reachable asks the login realm's public endpoint whether Keycloak serves
// requests. It needs no token, so a Keycloak that is back costs no login
// until a resource asks for a secret.
func (c *Client) Reachable(ctx context.Context) error {
	_, err := c.gc.GetIssuer(ctx, c.cfg.Realm)
	observe(c.name, OpProbe, err)
	if err != nil {
		return fmt.Errorf("reach %s realm %q: %w", c.cfg.URL, c.cfg.Realm, markUnavailable(err))
	}
	return nil
}
