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
	"slices"
	"strconv"
	"strings"
)

// Rule grants capabilities on a path relative to a namespace's KV prefix.
type Rule struct {
	Path         string
	Capabilities []string
}

// capabilityOrder is the order capabilities are written in, so that the same
// rules always render to the same text.
var capabilityOrder = []string{"create", "read", "update", "patch", "delete", "list"}

// metadataCapabilities are the ones that KV version 2 checks on the
// metadata/ path rather than on data/.
var metadataCapabilities = []string{"read", "list"}

// RenderPolicy renders the ACL policy of a namespace's rules as HCL. The
// output depends only on its input (rules sorted and merged by path,
// capabilities in a fixed order), so comparing it with what Vault holds
// tells whether a write is needed.
func (c *Client) RenderPolicy(owner, namespace string, rules []Rule) string {
	merged := map[string][]string{}
	for _, r := range rules {
		merged[r.Path] = append(merged[r.Path], r.Capabilities...)
	}
	paths := make([]string, 0, len(merged))
	for p := range merged {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	var b strings.Builder
	fmt.Fprintf(&b, "# Managed by vault-keycloak-operator for VaultApp %s.\n", owner)
	b.WriteString("# Edits made here are reverted at the next refresh.\n")
	for _, p := range paths {
		caps := ordered(merged[p], capabilityOrder)
		writePath(&b, fmt.Sprintf("%s/data/%s/%s", c.cfg.KVMount, namespace, p), caps)
		if meta := ordered(caps, metadataCapabilities); len(meta) > 0 {
			writePath(&b, fmt.Sprintf("%s/metadata/%s/%s", c.cfg.KVMount, namespace, p), meta)
		}
	}
	return b.String()
}

func writePath(b *strings.Builder, path string, caps []string) {
	quoted := make([]string, len(caps))
	for i, c := range caps {
		quoted[i] = strconv.Quote(c)
	}
	fmt.Fprintf(b, "\npath %s {\n  capabilities = [%s]\n}\n", strconv.Quote(path), strings.Join(quoted, ", "))
}

// ordered returns the members of in that appear in order, in that order,
// without duplicates.
func ordered(in, order []string) []string {
	var out []string
	for _, c := range order {
		if slices.Contains(in, c) {
			out = append(out, c)
		}
	}
	return out
}

// ReadPolicy returns the policy's text, and false when it does not exist.
func (c *Client) ReadPolicy(ctx context.Context, name string) (string, bool, error) {
	var text string
	var found bool
	err := c.do(ctx, OpReadPolicy, func() (bool, error) {
		secret, err := c.api.Logical().ReadWithContext(ctx, "sys/policies/acl/"+name)
		if err != nil || secret == nil || secret.Data == nil {
			return false, err
		}
		text, found = secret.Data["policy"].(string)
		return found, nil
	})
	if err != nil {
		return "", false, fmt.Errorf("read policy %q: %w", name, err)
	}
	return text, found, nil
}

// WritePolicy creates or replaces the policy.
func (c *Client) WritePolicy(ctx context.Context, name, text string) error {
	err := c.do(ctx, OpWritePolicy, func() (bool, error) {
		_, err := c.api.Logical().WriteWithContext(ctx, "sys/policies/acl/"+name, map[string]any{"policy": text})
		return true, err
	})
	if err != nil {
		return fmt.Errorf("write policy %q: %w", name, err)
	}
	return nil
}

// DeletePolicy removes the policy; removing one that is gone is no error.
func (c *Client) DeletePolicy(ctx context.Context, name string) error {
	err := c.do(ctx, OpDeletePolicy, func() (bool, error) {
		_, err := c.api.Logical().DeleteWithContext(ctx, "sys/policies/acl/"+name)
		return true, err
	})
	if err != nil {
		return fmt.Errorf("delete policy %q: %w", name, err)
	}
	return nil
}
