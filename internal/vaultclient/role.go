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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Role is the part of a Kubernetes-auth role that the operator owns. Vault
// holds more fields; the ones not listed here are left at Vault's defaults.
type Role struct {
	// ServiceAccounts that may log in (bound_service_account_names).
	ServiceAccounts []string
	// Namespace they must be in (bound_service_account_namespaces).
	Namespace string
	// Policies attached to the tokens issued (token_policies).
	Policies []string
	// TTL of the tokens issued (token_ttl).
	TTL time.Duration
	// MaxTTL is the longest a token lives, renewals included
	// (token_max_ttl): a VaultServer's cap. Zero writes none (the
	// environment's Vault, as earlier releases: the admin's policy for the
	// operator may not allow the parameter).
	MaxTTL time.Duration
	// Drift, on a role read from Vault, says which of the bindings the
	// operator writes beside these (a Kubernetes role's audience, a JWT
	// role's issuer) differs from its configuration: the role is the
	// operator's shape all the same, and written again.
	Drift string
}

// Equal reports whether a role Vault holds (r) grants what the wanted
// one (o) says. A MaxTTL the wanted role leaves at zero is not compared:
// none is written.
func (r Role) Equal(o Role) bool {
	return r.Drift == "" && o.Drift == "" && sortedEqual(r.ServiceAccounts, o.ServiceAccounts) && r.Namespace == o.Namespace &&
		sortedEqual(r.Policies, o.Policies) && r.TTL == o.TTL && (o.MaxTTL == 0 || r.MaxTTL == o.MaxTTL)
}

func sortedEqual(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func (c *Client) rolePath(name string) string {
	return "auth/" + c.cfg.KubernetesAuthMount + "/role/" + name
}

// ReadRole returns the role, and false when it does not exist.
func (c *Client) ReadRole(ctx context.Context, name string) (Role, bool, error) {
	var role Role
	var found bool
	err := c.do(ctx, OpReadRole, func() (bool, error) {
		secret, err := c.api.Logical().ReadWithContext(ctx, c.rolePath(name))
		if err != nil || secret == nil || secret.Data == nil {
			return false, err
		}
		found = true
		if c.cfg.AppRoleAudience != "" {
			role = c.jwtRoleOf(secret.Data)
			return true, nil
		}
		role = c.kubernetesRoleOf(secret.Data)
		return true, nil
	})
	if err != nil {
		return Role{}, false, fmt.Errorf("read role %q: %w", name, err)
	}
	return role, found, nil
}

// WriteRole creates or replaces the role.
func (c *Client) WriteRole(ctx context.Context, name string, r Role) error {
	err := c.do(ctx, OpWriteRole, func() (bool, error) {
		data := map[string]any{
			"bound_service_account_names":      r.ServiceAccounts,
			"bound_service_account_namespaces": []string{r.Namespace},
			"token_policies":                   tokenPolicies(r.Policies),
			"token_ttl":                        int(r.TTL.Seconds()),
		}
		switch {
		case c.cfg.AppRoleAudience != "":
			data = c.jwtRoleData(r)
		case c.cfg.AppRoleKubernetesAudience != "":
			data["audience"] = c.cfg.AppRoleKubernetesAudience
		}
		if r.MaxTTL > 0 {
			data["token_max_ttl"] = int(r.MaxTTL.Seconds())
		}
		_, err := c.api.Logical().WriteWithContext(ctx, c.rolePath(name), data)
		return true, err
	})
	// Noted even when it failed: a write that timed out may have landed.
	c.note(kindRole, name, true)
	if err != nil {
		return fmt.Errorf("write role %q: %w", name, err)
	}
	return nil
}

// DeleteRole removes the role; removing one that is gone is no error.
func (c *Client) DeleteRole(ctx context.Context, name string) error {
	err := c.do(ctx, OpDeleteRole, func() (bool, error) {
		_, err := c.api.Logical().DeleteWithContext(ctx, c.rolePath(name))
		return true, err
	})
	if err != nil {
		return fmt.Errorf("delete role %q: %w", name, err)
	}
	c.note(kindRole, name, false)
	return nil
}

// kubernetesRoleOf reads a Kubernetes-auth role back as a Role. The
// operator always binds exactly one namespace, and the configured audience
// where there is one; anything else (more namespaces, "*", another or no
// audience) is drift, shown as an impossible namespace so that the role is
// written again.
func (c *Client) kubernetesRoleOf(data map[string]any) Role {
	role := Role{
		ServiceAccounts: stringList(data["bound_service_account_names"]),
		Policies:        stringList(data["token_policies"]),
		TTL:             seconds(data["token_ttl"]),
		MaxTTL:          seconds(data["token_max_ttl"]),
	}
	if ns := stringList(data["bound_service_account_namespaces"]); len(ns) == 1 {
		role.Namespace = ns[0]
	} else {
		role.Namespace = fmt.Sprint(ns)
	}
	if audience, _ := data["audience"].(string); c.cfg.AppRoleKubernetesAudience != "" && audience != c.cfg.AppRoleKubernetesAudience {
		role.Drift = fmt.Sprintf("audience %q, where the VaultServer's spec.appAuth.kubernetes.audience gives %q", audience, c.cfg.AppRoleKubernetesAudience)
	}
	return role
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func seconds(v any) time.Duration {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return time.Duration(i) * time.Second
	case float64:
		return time.Duration(n) * time.Second
	}
	return 0
}

// A JWT role's type, and the claim that names the ServiceAccount.
const (
	roleTypeJWT = "jwt"
	claimSub    = "sub"
	claimIss    = "iss"
)

// subjectPrefix starts the subject (sub claim) of every ServiceAccount
// token: system:serviceaccount:<namespace>:<name>.
const subjectPrefix = "system:serviceaccount:"

// jwtRoleData is a JWT-auth role that only tokens of the role's
// ServiceAccounts, issued for the configured audience, log in with.
func (c *Client) jwtRoleData(r Role) map[string]any {
	subjects := make([]string, len(r.ServiceAccounts))
	for i, sa := range r.ServiceAccounts {
		subjects[i] = subjectPrefix + r.Namespace + ":" + sa
	}
	// A list: the sub claim must be one of them.
	claims := map[string]any{claimSub: subjects}
	if c.cfg.AppRoleIssuer != "" {
		claims[claimIss] = c.cfg.AppRoleIssuer
	}
	return map[string]any{
		"role_type":         roleTypeJWT,
		"user_claim":        claimSub,
		"bound_audiences":   []string{c.cfg.AppRoleAudience},
		"bound_claims":      claims,
		"bound_claims_type": "string",
		"token_policies":    tokenPolicies(r.Policies),
		"token_ttl":         int(r.TTL.Seconds()),
	}
}

// tokenPolicies is a role's token_policies (the VaultApp's one policy) as
// a string, which Vault and OpenBao both read as the list. The admin's
// policy for the operator allows token_policies by a glob ("app.*") and
// denies a comma: Vault matches each element of a JSON list against the
// glob, OpenBao (2.7) the list as a whole and refuses it (403); one name
// as a string passes on both. The operator writes one policy per role.
func tokenPolicies(policies []string) string { return strings.Join(policies, ",") }

// jwtRoleOf reads a JWT-auth role back as a Role. Whatever the operator
// would not have written (another role type, user claim, audience, a
// glob claim type, a subject of another form or namespace) is drift,
// shown as an impossible namespace so that the role is written again.
func (c *Client) jwtRoleOf(data map[string]any) Role {
	role := Role{Policies: stringList(data["token_policies"]), TTL: seconds(data["token_ttl"]), MaxTTL: seconds(data["token_max_ttl"])}
	claims, _ := data["bound_claims"].(map[string]any)
	var subjects []string
	switch sub := claims[claimSub].(type) {
	case string:
		subjects = []string{sub}
	case []any:
		subjects = stringList(sub)
	}
	namespaces := map[string]bool{}
	for _, subject := range subjects {
		rest, ok := strings.CutPrefix(subject, subjectPrefix)
		ns, sa, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || strings.Contains(sa, ":") {
			namespaces["(subject "+subject+")"] = true
			continue
		}
		namespaces[ns] = true
		role.ServiceAccounts = append(role.ServiceAccounts, sa)
	}
	for ns := range namespaces {
		role.Namespace = ns
	}
	audiences := stringList(data["bound_audiences"])
	typ, _ := data["role_type"].(string)
	claim, _ := data["user_claim"].(string)
	claimsType, _ := data["bound_claims_type"].(string)
	others := len(claims) - 1 // claims beside sub and iss
	if _, ok := claims[claimIss]; ok {
		others--
	}
	if len(namespaces) != 1 || typ != roleTypeJWT || claim != claimSub || claimsType != "string" || others != 0 ||
		len(audiences) != 1 || audiences[0] != c.cfg.AppRoleAudience {
		role.Namespace = fmt.Sprintf("(drift: role_type %q, user_claim %q, bound_audiences %v, bound_claims %v)", typ, claim, audiences, claims)
	}
	if !c.boundIssuerIs(claims) {
		role.Drift = fmt.Sprintf("bound_claims iss %v, where the VaultServer binds %q (spec.appAuth.jwt.issuer, or this cluster's)", claims[claimIss], c.cfg.AppRoleIssuer)
	}
	return role
}

// boundIssuerIs reports whether a role's bound claims are sub and, when an
// issuer is configured, iss with that issuer alone (a string, or a list of
// it: Vault may answer either).
func (c *Client) boundIssuerIs(claims map[string]any) bool {
	if c.cfg.AppRoleIssuer == "" {
		_, bound := claims[claimIss]
		return !bound
	}
	var issuers []string
	switch iss := claims[claimIss].(type) {
	case string:
		issuers = []string{iss}
	case []any:
		issuers = stringList(iss)
	}
	return slices.Equal(issuers, []string{c.cfg.AppRoleIssuer})
}
