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

// Package vaultfake is a Vault in memory for the unit tests of the
// controllers: what it holds and every write, and knobs for failures.
package vaultfake

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	vaultapi "github.com/hashicorp/vault/api"

	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Vault keeps policies and roles in maps and records every write, so a
// unit test asserts what a controller did to Vault. It answers the calls of
// the VaultApp controller's VaultAPI (internal/controller/vault); its
// fields are the test's knobs.
type Vault struct {
	// KVMount is where the KV engine is mounted ("secret").
	KVMount string
	// KVPath is each namespace's path in it ("": the namespace).
	KVPath string
	// mu: the controller reads, and writes, the policy and the role at once.
	mu       sync.Mutex
	Policies map[string]string
	Roles    map[string]vaultclient.Role
	// Writes lists "write_policy <name>", "delete_role <name>", ...
	Writes []string
	// Reads counts ReadPolicy and ReadRole calls.
	Reads int
	// NoListing makes Free unsure, as when Vault refuses the listing.
	NoListing bool
	// Fail, when set, is what every request gets (Vault down, or refusing).
	Fail error
	// FailDelete, when set, is what deletes get.
	FailDelete error
	// Forbidden names are out of the operator's Vault policy: 403.
	Forbidden map[string]bool
	// ForbiddenReads counts the reads of forbidden names.
	ForbiddenReads int
	// Registrations are the clusters' registration policies, by name
	// (apart from Policies, and not in Writes).
	Registrations map[string]string
}

// ErrForbidden is Vault's answer on a path the token's policy does not allow.
var ErrForbidden = &vaultapi.ResponseError{StatusCode: http.StatusForbidden, Errors: []string{"1 error occurred:\n\t* permission denied"}}

// New is an empty Vault whose KV engine is mounted at "secret".
func New() *Vault {
	return &Vault{KVMount: "secret", Policies: map[string]string{}, Roles: map[string]vaultclient.Role{}}
}

// KV is where the KV engine is mounted, and each namespace's path in it.
func (f *Vault) KV() vaultclient.KV { return vaultclient.KV{Mount: f.KVMount, Path: f.KVPath} }

func (f *Vault) ReadPolicy(_ context.Context, name string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return "", false, f.Fail
	}
	if f.Forbidden[name] {
		f.ForbiddenReads++
		return "", false, ErrForbidden
	}
	f.Reads++
	text, ok := f.Policies[name]
	return text, ok, nil
}

func (f *Vault) WritePolicy(_ context.Context, name, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	f.Policies[name] = text
	f.Writes = append(f.Writes, vaultclient.OpWritePolicy+" "+name)
	return nil
}

func (f *Vault) DeletePolicy(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil || f.FailDelete != nil {
		return errors.Join(f.Fail, f.FailDelete)
	}
	delete(f.Policies, name)
	f.Writes = append(f.Writes, vaultclient.OpDeletePolicy+" "+name)
	return nil
}

func (f *Vault) ListPolicies(_ context.Context, prefix string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return nil, f.Fail
	}
	var out []string
	for n := range f.Policies {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *Vault) ReadRole(_ context.Context, name string) (vaultclient.Role, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return vaultclient.Role{}, false, f.Fail
	}
	f.Reads++
	r, ok := f.Roles[name]
	return r, ok, nil
}

func (f *Vault) WriteRole(_ context.Context, name string, r vaultclient.Role) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	f.Roles[name] = r
	f.Writes = append(f.Writes, vaultclient.OpWriteRole+" "+name)
	return nil
}

func (f *Vault) DeleteRole(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil || f.FailDelete != nil {
		return errors.Join(f.Fail, f.FailDelete)
	}
	delete(f.Roles, name)
	f.Writes = append(f.Writes, vaultclient.OpDeleteRole+" "+name)
	return nil
}

// Free answers from the maps, as a listing taken now would; a test sets
// NoListing to stand for an operator whose policy may not list.
func (f *Vault) Free(_ context.Context, name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, policy := f.Policies[name]
	_, role := f.Roles[name]
	return !f.NoListing && f.Fail == nil && !policy && !role
}

func (f *Vault) Healthy(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Fail
}

// ReadRegistration reads a cluster name's registration from Registrations.
func (f *Vault) ReadRegistration(_ context.Context, cluster string) (vaultclient.Registration, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return vaultclient.Registration{}, false, f.Fail
	}
	name := vaultclient.RegistrationName(cluster)
	if f.Forbidden[name] {
		return vaultclient.Registration{}, false, ErrForbidden
	}
	text, ok := f.Registrations[name]
	if !ok {
		return vaultclient.Registration{}, false, nil
	}
	r, _ := vaultclient.ParseRegistration(text)
	return r, true, nil
}

// WriteRegistration keeps a registration's text in Registrations.
func (f *Vault) WriteRegistration(_ context.Context, r vaultclient.Registration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return f.Fail
	}
	if f.Registrations == nil {
		f.Registrations = map[string]string{}
	}
	f.Registrations[vaultclient.RegistrationName(r.Cluster)] = vaultclient.RenderRegistration(r)
	return nil
}

// DeleteRegistration removes a registration from Registrations.
func (f *Vault) DeleteRegistration(_ context.Context, cluster string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil || f.FailDelete != nil {
		return errors.Join(f.Fail, f.FailDelete)
	}
	delete(f.Registrations, vaultclient.RegistrationName(cluster))
	return nil
}

// ListRegistrations lists the cluster names in Registrations.
func (f *Vault) ListRegistrations(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Fail != nil {
		return nil, f.Fail
	}
	var out []string
	for n := range f.Registrations {
		out = append(out, strings.TrimPrefix(n, vaultclient.RegistrationPrefix))
	}
	slices.Sort(out)
	return out, nil
}
