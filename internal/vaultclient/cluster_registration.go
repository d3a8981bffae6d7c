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
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// A cluster's registration in a Vault it shares with other clusters: the
// policy vko-cluster.<cluster>, which grants nothing. Its comment lines say
// which cluster holds the name (its ID, the kube-system namespace's UID,
// tells two clusters of one name apart), where its namespaces' KV paths
// are, and which other clusters found the name held and when they last
// said so. Vault keeps no metadata beside a policy, so, as with the marks,
// the text is the record. Other tools and clusters write to the same
// Vault: the operator writes only its own registration, and a claim into
// another's of its own name.

// RegistrationPrefix begins every registration's policy name.
const RegistrationPrefix = "vko-cluster."

// Registration is what a cluster says of itself in a Vault.
type Registration struct {
	// Cluster is the name its marks carry; ID tells two clusters of that
	// name apart.
	Cluster, ID string
	// KV is where its namespaces' secrets are.
	KV KV
	// JWTMount and JWTIssuer, for JWT app roles, are the mount they are
	// written to and the issuer they bind.
	JWTMount, JWTIssuer string
	// Claims are the IDs of other clusters that found the name held, with
	// when each last said so.
	Claims map[string]time.Time
	// Wants are, by VaultServer of the cluster (several may write to one
	// Vault), the policies its VaultApps ask for that another cluster
	// holds (clusters without a name prefix share the names), and when
	// that server's check last said so: the holder keeps their tokens
	// short while they are asked for, and forgets a request no check
	// renews (a cluster gone without unregistering).
	Wants map[string]Wanted
}

// Wanted is one VaultServer's request for policy names.
type Wanted struct {
	At    time.Time
	Names []string
}

// MaxWants is the most policy names a registration lists as wanted, per
// VaultServer.
const MaxWants = 500

// RegistrationName is the policy name of a cluster's registration.
func RegistrationName(cluster string) string { return RegistrationPrefix + cluster }

const (
	registrationHead = "# vault-keycloak-operator: cluster %s writes policies to this Vault. This policy grants nothing: it records the cluster."
	lineID           = "# id: "
	lineKVMount      = "# kv-mount: "
	lineKVPath       = "# kv-path: "
	lineClaim        = "# claimed-by: "
	lineJWTMount     = "# jwt-mount: "
	lineJWTIssuer    = "# jwt-issuer: "
	lineWants        = "# wants: "
)

// RenderRegistration is the policy text of a registration; the same input
// renders the same text (claims sorted), so that a write is needed only
// when something changed.
func RenderRegistration(r Registration) string {
	var b strings.Builder
	fmt.Fprintf(&b, registrationHead+"\n", r.Cluster)
	b.WriteString(lineID + r.ID + "\n")
	b.WriteString(lineKVMount + r.KV.Mount + "\n")
	b.WriteString(lineKVPath + r.KV.Path + "\n")
	if r.JWTMount != "" {
		b.WriteString(lineJWTMount + r.JWTMount + "\n")
		b.WriteString(lineJWTIssuer + r.JWTIssuer + "\n")
	}
	for _, id := range slices.Sorted(maps.Keys(r.Claims)) {
		b.WriteString(lineClaim + id + " " + r.Claims[id].UTC().Format(time.RFC3339) + "\n")
	}
	for _, server := range slices.Sorted(maps.Keys(r.Wants)) {
		w := r.Wants[server]
		names := slices.Compact(slices.Sorted(slices.Values(w.Names)))
		for _, name := range names[:min(len(names), MaxWants)] {
			b.WriteString(lineWants + server + " " + w.At.UTC().Format(time.RFC3339) + " " + name + "\n")
		}
	}
	return b.String()
}

// ParseRegistration reads a registration's text; false when the text is not
// one (someone else's policy under the name).
func ParseRegistration(text string) (Registration, bool) {
	var r Registration
	lines := strings.Split(text, "\n")
	if _, err := fmt.Sscanf(lines[0], "# vault-keycloak-operator: cluster %s writes", &r.Cluster); err != nil || r.Cluster == "" {
		return Registration{}, false
	}
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, lineID):
			r.ID = strings.TrimPrefix(l, lineID)
		case strings.HasPrefix(l, lineKVMount):
			r.KV.Mount = strings.TrimPrefix(l, lineKVMount)
		case strings.HasPrefix(l, lineKVPath):
			r.KV.Path = strings.TrimPrefix(l, lineKVPath)
		case strings.HasPrefix(l, lineJWTMount):
			r.JWTMount = strings.TrimPrefix(l, lineJWTMount)
		case strings.HasPrefix(l, lineJWTIssuer):
			r.JWTIssuer = strings.TrimPrefix(l, lineJWTIssuer)
		case strings.HasPrefix(l, lineWants):
			r.addWanted(strings.Fields(strings.TrimPrefix(l, lineWants)))
		case strings.HasPrefix(l, lineClaim):
			id, at, _ := strings.Cut(strings.TrimPrefix(l, lineClaim), " ")
			if when, err := time.Parse(time.RFC3339, at); err == nil && id != "" {
				if r.Claims == nil {
					r.Claims = map[string]time.Time{}
				}
				r.Claims[id] = when
			}
		}
	}
	return r, r.ID != ""
}

// addWanted reads one wants line's fields: server, time, policy.
func (r *Registration) addWanted(fields []string) {
	if len(fields) != 3 {
		return
	}
	at, err := time.Parse(time.RFC3339, fields[1])
	if err != nil {
		return
	}
	if r.Wants == nil {
		r.Wants = map[string]Wanted{}
	}
	w := r.Wants[fields[0]]
	if len(w.Names) < MaxWants {
		w.At, w.Names = at, append(w.Names, fields[2])
	}
	r.Wants[fields[0]] = w
}

// ReadRegistration reads the registration of a cluster name; false when
// there is none. A policy of that name that is no registration is an
// error: the name is someone else's.
func (c *Client) ReadRegistration(ctx context.Context, cluster string) (Registration, bool, error) {
	name := RegistrationName(cluster)
	text, found, err := c.readPolicyText(ctx, OpReadRegistration, name)
	if err != nil || !found {
		return Registration{}, false, err
	}
	r, ok := ParseRegistration(text)
	if !ok {
		return Registration{}, false, fmt.Errorf("policy %q exists in Vault and is no registration of this operator's: remove or rename it", name)
	}
	return r, true, nil
}

// WriteRegistration writes a registration under its cluster's name.
func (c *Client) WriteRegistration(ctx context.Context, r Registration) error {
	name := RegistrationName(r.Cluster)
	err := c.do(ctx, OpWriteRegistration, func() (bool, error) {
		_, err := c.api.Logical().WriteWithContext(ctx, "sys/policies/acl/"+name, map[string]any{"policy": RenderRegistration(r)})
		return true, err
	})
	if err != nil {
		return fmt.Errorf("write registration %q: %w", name, err)
	}
	return nil
}

// DeleteRegistration removes a cluster name's registration.
func (c *Client) DeleteRegistration(ctx context.Context, cluster string) error {
	name := RegistrationName(cluster)
	err := c.do(ctx, OpDeleteRegistration, func() (bool, error) {
		_, err := c.api.Logical().DeleteWithContext(ctx, "sys/policies/acl/"+name)
		return true, err
	})
	if err != nil {
		return fmt.Errorf("delete registration %q: %w", name, err)
	}
	return nil
}

// ListRegistrations lists the cluster names registered in this Vault (in
// the client's Vault namespace).
func (c *Client) ListRegistrations(ctx context.Context) ([]string, error) {
	var clusters []string
	err := c.do(ctx, OpListRegistrations, func() (bool, error) {
		secret, err := c.api.Logical().ListWithContext(ctx, "sys/policies/acl")
		if err != nil || secret == nil || secret.Data == nil {
			return false, err
		}
		for _, n := range stringList(secret.Data["keys"]) {
			if cluster, ok := strings.CutPrefix(n, RegistrationPrefix); ok {
				clusters = append(clusters, cluster)
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list registrations: %w", err)
	}
	return clusters, nil
}
