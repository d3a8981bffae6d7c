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

	"github.com/Nerzal/gocloak/v13"
)

// Unavailable reports whether err means Keycloak did not answer, rather
// than refused: nothing listens, the connection broke or timed out, or it
// answered that it cannot serve now (5xx). gocloak turns a transport
// failure into an APIError with no HTTP status. Such a failure is cured by
// Keycloak coming back; its resources wait for Reachable.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var apiErr *gocloak.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 0 || apiErr.Code >= http.StatusInternalServerError
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr)
}

// Reachable asks the login realm's public endpoint whether Keycloak serves
// requests. It needs no token, so a Keycloak that is back costs no login
// until a resource asks for a secret.
func (s *Server) Reachable(ctx context.Context) error {
	_, err := s.gc.GetIssuer(ctx, s.cfg.Realm)
	observe(s.name, OpProbe, err)
	if err != nil {
		return fmt.Errorf("reach %s realm %q: %w", s.cfg.URL, s.cfg.Realm, err)
	}
	return nil
}
