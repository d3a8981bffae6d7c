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
	"encoding/json"
	"strings"

	"github.com/Nerzal/gocloak/v13"
	"github.com/go-resty/resty/v2"
)

// getJSON reads one admin resource into out.
func (c *Client) getJSON(ctx context.Context, op, url string, out any) error {
	return c.call(ctx, op, func(token string) error {
		resp, err := c.gc.RestyClient().R().SetContext(ctx).SetAuthToken(token).Get(url)
		if err := answer(resp, err); err != nil {
			return err
		}
		return json.Unmarshal(resp.Body(), out)
	})
}

// adminURL joins the admin API's base with path segments.
func (c *Client) adminURL(segments ...string) string {
	return strings.TrimRight(c.cfg.URL, "/") + "/admin/" + strings.Join(segments, "/")
}

// answer turns a refusal into the error gocloak gives for one, so that
// callers tell a 404 (status) or a 5xx (Unavailable) apart the same way.
// Only the status line is kept: an answer's body may quote a secret.
func answer(resp *resty.Response, err error) error {
	if err != nil {
		return err
	}
	if resp.IsError() {
		return &gocloak.APIError{Code: resp.StatusCode(), Message: resp.Status()}
	}
	return nil
}
