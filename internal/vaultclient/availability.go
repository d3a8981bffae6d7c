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

package vaultclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	vaultapi "github.com/hashicorp/vault/api"
)

// ErrUnavailable marks a failure where Vault did not answer, rather than
// refused: nothing listens, the connection broke or timed out, or Vault said
// it cannot serve now (5xx: sealed, no active node, overloaded). Such a
// failure is cured by Vault coming back, not by the operator or the app
// team. Only this client's requests to Vault are marked: a Kubernetes API
// error or a refusal never is.
var ErrUnavailable = errors.New("no answer")

// Unavailable reports whether err is marked ErrUnavailable.
func Unavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// markUnavailable marks err when it is one of Vault not answering. A
// certificate or a name that does not resolve is configuration, which
// waiting does not cure; 429 is throttling, which backoff answers.
func markUnavailable(err error) error {
	if err == nil || Unavailable(err) || !notAnswering(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

func notAnswering(err error) bool {
	var respErr *vaultapi.ResponseError
	if errors.As(err, &respErr) {
		return respErr.StatusCode >= http.StatusInternalServerError
	}
	return transportFailure(err)
}

// transportFailure: the request got no answer (refused, reset, timed out),
// not for a reason of configuration (TLS trust, DNS).
func transportFailure(err error) bool {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound,
		errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid):
		return false
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Healthy asks Vault whether it serves requests: initialized, unsealed and
// active (or a standby that forwards). It needs no token, so it costs no
// login; it is what a resource waits on after an Unavailable failure.
func (c *Client) Healthy(ctx context.Context) error {
	health, err := c.readHealth(ctx)
	observe(OpHealth, err, true)
	switch {
	case err != nil:
		return fmt.Errorf("read Vault's health at %s: %w", c.cfg.Address, markUnavailable(err))
	case !health.Initialized:
		return fmt.Errorf("vault at %s is not initialized", c.cfg.Address)
	case health.Sealed:
		return fmt.Errorf("vault at %s is sealed", c.cfg.Address)
	}
	return nil
}

// Check tells whether the operator can work with this Vault: it serves
// requests, and the operator can log in (or its token is valid). It
// returns what the server says of itself (product and version).
func (c *Client) Check(ctx context.Context) (ServerInfo, error) {
	health, err := c.readHealth(ctx)
	observe(OpHealth, err, true)
	info := health.info()
	switch {
	case err != nil:
		return ServerInfo{}, fmt.Errorf("read Vault's health at %s: %w", c.cfg.Address, markUnavailable(err))
	case !health.Initialized:
		return info, fmt.Errorf("vault at %s is not initialized", c.cfg.Address)
	case health.Sealed:
		return info, fmt.Errorf("vault at %s is sealed", c.cfg.Address)
	}
	generation, err := c.ensureToken(ctx)
	if err != nil {
		return info, markUnavailable(err)
	}
	// A token still within its renewal window may have been revoked:
	// ask (a read, not a login), and log in again only if it is gone.
	if c.tokenGone(ctx, false) {
		c.forgetToken(generation)
		if _, err := c.ensureToken(ctx); err != nil {
			return info, markUnavailable(err)
		}
	}
	return info, nil
}

// ErrLogin marks a failed login (or a configured token Vault does not
// know): the operator could not get a token, so no request was judged by
// its policy.
var ErrLogin = errors.New("vault login failed")

// PolicyRefused reports whether Vault refused the operator's own request
// with its policy: a 403 that is neither a failed login nor a token Vault
// no longer knows (a static token revoked or expired, which no login
// replaces). It is the Vault admin's policy for the operator that must
// change.
func PolicyRefused(err error) bool {
	return Forbidden(err) && !errors.Is(err, ErrLogin) && !tokenInvalid(err)
}

// Forbidden reports whether Vault refused a request with 403 (after a
// fresh login): the operator's own Vault policy does not reach the path, as
// when the admin confines each cluster's operator to its name prefix.
func Forbidden(err error) bool {
	var respErr *vaultapi.ResponseError
	return errors.As(err, &respErr) && respErr.StatusCode == http.StatusForbidden
}
