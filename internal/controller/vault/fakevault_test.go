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
	"net/http"
	"slices"
	"strings"
	"sync"

	vaultapi "github.com/hashicorp/vault/api"

	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
)

// fakeVault keeps policies and roles in maps and records every write, so a
// unit test asserts what the controller did to Vault.
type fakeVault struct {
	// mu: the controller reads, and writes, the policy and the role at once.
	mu       sync.Mutex
	policies map[string]string
	roles    map[string]vaultclient.Role
	// writes lists "write_policy <name>", "delete_role <name>", ...
	writes []string
	// reads counts ReadPolicy and ReadRole calls.
	reads int
	// noListing makes Free unsure, as when Vault refuses the listing.
	noListing bool
	// fail, when set, is what every request gets (Vault down, or refusing).
	fail error
	// failDelete, when set, is what deletes get.
	failDelete error
	// forbidden names are out of the operator's Vault policy: 403.
	forbidden map[string]bool
	// forbiddenReads counts the reads of forbidden names.
	forbiddenReads int
}

// errForbidden is Vault's answer on a path the token's policy does not allow.
var errForbidden = &vaultapi.ResponseError{StatusCode: http.StatusForbidden, Errors: []string{"1 error occurred:\n\t* permission denied"}}

func newFakeVault() *fakeVault {
	return &fakeVault{policies: map[string]string{}, roles: map[string]vaultclient.Role{}}
}

func (f *fakeVault) RenderPolicy(owner vaultclient.Owner, rules []vaultclient.Rule) string {
	return vaultclient.RenderPolicy("secret", owner, rules)
}

func (f *fakeVault) ReadPolicy(_ context.Context, name string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return "", false, f.fail
	}
	if f.forbidden[name] {
		f.forbiddenReads++
		return "", false, errForbidden
	}
	f.reads++
	text, ok := f.policies[name]
	return text, ok, nil
}

func (f *fakeVault) WritePolicy(_ context.Context, name, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.policies[name] = text
	f.writes = append(f.writes, vaultclient.OpWritePolicy+" "+name)
	return nil
}

func (f *fakeVault) DeletePolicy(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil || f.failDelete != nil {
		return errors.Join(f.fail, f.failDelete)
	}
	delete(f.policies, name)
	f.writes = append(f.writes, vaultclient.OpDeletePolicy+" "+name)
	return nil
}

func (f *fakeVault) ListPolicies(_ context.Context, prefix string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	var out []string
	for n := range f.policies {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeVault) ReadRole(_ context.Context, name string) (vaultclient.Role, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return vaultclient.Role{}, false, f.fail
	}
	f.reads++
	r, ok := f.roles[name]
	return r, ok, nil
}

func (f *fakeVault) WriteRole(_ context.Context, name string, r vaultclient.Role) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.roles[name] = r
	f.writes = append(f.writes, vaultclient.OpWriteRole+" "+name)
	return nil
}

func (f *fakeVault) DeleteRole(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil || f.failDelete != nil {
		return errors.Join(f.fail, f.failDelete)
	}
	delete(f.roles, name)
	f.writes = append(f.writes, vaultclient.OpDeleteRole+" "+name)
	return nil
}

// Free answers from the maps, as a listing taken now would; a test sets
// noListing to stand for an operator whose policy may not list.
func (f *fakeVault) Free(_ context.Context, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, policy := f.policies[name]
	_, role := f.roles[name]
	return !f.noListing && f.fail == nil && !policy && !role
}

func (f *fakeVault) Healthy(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail
}
