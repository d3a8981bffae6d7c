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

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	vaultapi "github.com/hashicorp/vault/api"

	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// VaultAuditEntry is one request in Vault's file audit log, as Vault
// writes it (values are HMACed; the operation and the path are not).
type VaultAuditEntry struct {
	Type    string `json:"type"`
	Error   string `json:"error"`
	Request struct {
		Operation string `json:"operation"`
		Path      string `json:"path"`
	} `json:"request"`
}

// EnableAudit turns on Vault's file audit device, writing to path: every
// request and response from now on, as an admin would audit the operator.
func (v *Vault) EnableAudit(ctx context.Context, path string) error {
	admin, err := v.AdminClient()
	if err != nil {
		return err
	}
	if err := admin.Sys().EnableAuditWithOptionsWithContext(ctx, "file", &vaultapi.EnableAuditOptions{
		Type: "file", Options: map[string]string{"file_path": path},
	}); err != nil {
		return fmt.Errorf("enable Vault's file audit device at %s: %w", path, err)
	}
	return nil
}

// VaultAudit reads the requests of a file audit log (its responses are
// left out), from the byte offset given; it returns the offset to read
// on from.
func VaultAudit(path string, offset int64) ([]VaultAuditEntry, int64, error) {
	var out []VaultAuditEntry
	var bad error
	offset, err := readLines(path, offset, func(line []byte) {
		var e VaultAuditEntry
		if err := json.Unmarshal(line, &e); err != nil {
			bad = fmt.Errorf("Vault audit log %s: %w", path, err)
		} else if e.Type == "request" {
			out = append(out, e)
		}
	})
	if err == nil {
		err = bad
	}
	return out, offset, err
}

// Removes reports whether the request deletes a policy or a role.
func (e VaultAuditEntry) Removes() bool {
	return e.Request.Operation == "delete" && (e.policy() || strings.Contains(e.Request.Path, "/role/"))
}

// WritesPolicy reports whether the request writes an ACL policy.
func (e VaultAuditEntry) WritesPolicy() bool {
	return (e.Request.Operation == "update" || e.Request.Operation == "create") && e.policy()
}

// policy reports whether the request is on a VaultApp's policy (or any
// the operator does not write): a cluster's registration
// (vko-cluster.<cluster>, written at each VaultServer check) is not one.
func (e VaultAuditEntry) policy() bool {
	return (strings.HasPrefix(e.Request.Path, "sys/policy/") || strings.HasPrefix(e.Request.Path, "sys/policies/acl/")) &&
		!strings.HasPrefix(e.Request.Path, "sys/policies/acl/"+vaultclient.RegistrationPrefix)
}
