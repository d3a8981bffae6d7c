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
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	vaultapi "github.com/hashicorp/vault/api"
)

// Unavailable reports whether err means Vault did not answer, rather than
// refused: nothing listens, the connection broke or timed out, or Vault
// answered that it cannot serve now (sealed, standby without a leader,
// overloaded). Such a failure is cured by Vault coming back, not by the
// operator or the app team; its resources wait for Healthy.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var respErr *vaultapi.ResponseError
	if errors.As(err, &respErr) {
		return respErr.StatusCode >= http.StatusInternalServerError || respErr.StatusCode == http.StatusTooManyRequests
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr)
}

// Healthy asks Vault whether it serves requests: initialized, unsealed and
// active (or a standby that forwards). It needs no token, so it costs no
// login; it is what a resource waits on after an Unavailable failure.
func (c *Client) Healthy(ctx context.Context) error {
	health, err := c.api.Sys().HealthWithContext(ctx)
	observe(OpHealth, err, true)
	switch {
	case err != nil:
		return fmt.Errorf("read Vault's health at %s: %w", c.cfg.Address, err)
	case !health.Initialized:
		return fmt.Errorf("vault at %s is not initialized", c.cfg.Address)
	case health.Sealed:
		return fmt.Errorf("vault at %s is sealed", c.cfg.Address)
	}
	return nil
}
