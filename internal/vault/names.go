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
}

// namesRetryAfterRefusal is how long a refused listing, or one too long
// to be worth it, is not asked again.
const namesRetryAfterRefusal = 5 * time.Minute

// NamesListMax is the most policies or roles a listing may hold and still
// be asked for every NamesMaxAge.
//
// Why: Vault's listings are not paged and carry every name, so each costs
// in proportion to the fleet, and a burst of new VaultApps, itself as long
// as the fleet is large, takes one every NamesMaxAge: the cost grew as the
// square of the fleet (bench-scale at 10,000: 1.30x the bare client's time,
// Vault CPU 4.0 ms per object against 3.1). Past this many names the two
// reads of each new name cost less, and their cost per object stays flat.
const NamesListMax = 2000

// Free reports whether neither a policy nor a role named name exists, by
// a listing at most NamesMaxAge old. Any doubt (a listing Vault refuses:
// the operator's policy may lack list on roles) answers false, and the
// caller reads the objects themselves; so does a listing of more than
// NamesListMax names, which is not asked again for a while.
func (c *Client) Free(ctx context.Context, name string) bool {
	c.names.mu.Lock()
	defer c.names.mu.Unlock()
	if time.Now().Before(c.names.refusedUntil) {
		return false
	}
	if time.Since(c.names.takenAt) >= NamesMaxAge {
		if err := c.listNames(ctx); err != nil {
			c.names.takenAt, c.names.refusedUntil = time.Time{}, time.Now().Add(namesRetryAfterRefusal)
			return false
		}
		if len(c.names.policies) > NamesListMax || len(c.names.roles) > NamesListMax {
			c.names.policies, c.names.roles = nil, nil
			c.names.takenAt, c.names.refusedUntil = time.Time{}, time.Now().Add(namesRetryAfterRefusal)
			return false
		}
	}
	return !c.names.policies[name] && !c.names.roles[name]
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
