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
	"sync"
	"time"
)

// NamesMaxAge is how old a listing of names may be when it answers that a
// name is free.
const NamesMaxAge = 500 * time.Millisecond

// names is a recent listing of the ACL policies and Kubernetes-auth roles
// in Vault, kept in step with the operator's own writes and deletes.
//
// Why: before writing for a new VaultApp the operator must know that no
// policy or role of that name exists that it did not write. Reading both
// costs two requests per object, as much as the writes themselves; when
// many VaultApps are created at once, one listing of each kind, shared by
// every new object for half a second, answers the same question. Vault has
// no compare-and-set on these paths, so the check was never atomic: a
// foreign object created by hand between the check and the write is
// overwritten either way. The listing widens that window from one request
// to half a second, and only for names never seen before; a name that is
// listed is read and judged as always.
type names struct {
	mu       sync.Mutex
	takenAt  time.Time
	policies map[string]bool
	roles    map[string]bool
	// refusedUntil: Vault refused a listing (the operator's policy lacks
	// list on roles); until then nobody asks again, and names are read.
	refusedUntil time.Time
	// size is how many names the last listing held; asked counts the
	// questions of the current window of NamesMaxAge (from windowStart),
	// askedBefore those of the window before: see worthListing.
	size               int
	windowStart        time.Time
	asked, askedBefore int
}

// namesRetryAfterRefusal is how long a refused listing is not asked again.
const namesRetryAfterRefusal = 5 * time.Minute

// namesPerRequest is how many listed names cost Vault about as much as one
// read, priced at a large fleet (a listing's cost per name grows with it);
// the measures are in docs/design.md, "Figures behind the constants".
const namesPerRequest = 500

// worthListing says whether a listing of size names costs Vault less than
// reading the names of questions new VaultApps would (two reads each).
//
// Why: Vault's listings are not paged and carry every name, so each costs
// in proportion to the fleet, and a burst of new VaultApps takes one every
// NamesMaxAge: at a fixed pace of creations, the cost per object grew with
// the fleet. Weighed against the questions of the last window,
// a listing is taken only where it pays: the first question (size unknown)
// and bursts fast enough for the fleet's size; otherwise names are read,
// at a cost per object that stays flat at any size.
//
// The listing's two requests (policies, roles) against the first
// question's two reads are a tie, settled for the listing, which the
// burst's next questions share: hence 1 + size/namesPerRequest.
func worthListing(size, questions int) bool {
	return 2*questions > 1+size/namesPerRequest
}

// Free reports whether neither a policy nor a role named name exists, by
// a listing at most NamesMaxAge old. Any doubt (a listing Vault refuses:
// the operator's policy may lack list on roles) answers false, and the
// caller reads the objects themselves; so does a question asked when a
// listing would not pay for itself (worthListing).
func (c *Client) Free(ctx context.Context, name string) bool {
	c.names.mu.Lock()
	defer c.names.mu.Unlock()
	now := time.Now()
	c.names.count(now)
	if now.Before(c.names.refusedUntil) {
		return false
	}
	if now.Sub(c.names.takenAt) >= NamesMaxAge {
		if !worthListing(c.names.size, max(c.names.asked, c.names.askedBefore)) {
			c.names.policies, c.names.roles = nil, nil
			return false
		}
		if err := c.listNames(ctx); err != nil {
			c.names.takenAt, c.names.refusedUntil = time.Time{}, now.Add(namesRetryAfterRefusal)
			return false
		}
	}
	return !c.names.policies[name] && !c.names.roles[name]
}

// count counts a question in the window of NamesMaxAge it falls in.
func (n *names) count(now time.Time) {
	switch since := now.Sub(n.windowStart); {
	case since >= 2*NamesMaxAge:
		n.askedBefore, n.asked, n.windowStart = 0, 0, now
	case since >= NamesMaxAge:
		n.askedBefore, n.asked, n.windowStart = n.asked, 0, n.windowStart.Add(NamesMaxAge)
	}
	n.asked++
}

// listNames takes a new listing; the caller holds c.names.mu.
func (c *Client) listNames(ctx context.Context) error {
	started := time.Now()
	policies, err := c.ListPolicies(ctx, "")
	if err != nil {
		return err
	}
	var roles []string
	err = c.do(ctx, OpListRoles, func() (bool, error) {
		secret, err := c.api.Logical().ListWithContext(ctx, "auth/"+c.cfg.KubernetesAuthMount+"/role")
		if err != nil || secret == nil || secret.Data == nil {
			return false, err
		}
		roles = stringList(secret.Data["keys"])
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("list roles: %w", err)
	}
	c.names.policies, c.names.roles = set(policies), set(roles)
	c.names.size = len(policies) + len(roles)
	// As old as the moment the first list was asked for.
	c.names.takenAt = started
	return nil
}

// note keeps the listing in step with the operator's own writes and
// deletes. It waits for a listing under way (it holds the lock while it
// asks Vault), so a name the operator just wrote is never called free.
func (c *Client) note(kind, name string, exists bool) {
	c.names.mu.Lock()
	defer c.names.mu.Unlock()
	m := c.names.roles
	if kind == kindPolicy {
		m = c.names.policies
	}
	if m == nil {
		return
	}
	if exists {
		m[name] = true
	} else {
		delete(m, name)
	}
}

const (
	kindPolicy = "policy"
	kindRole   = "role"
)

func set(items []string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, i := range items {
		m[i] = true
	}
	return m
}
