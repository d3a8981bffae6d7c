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
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Rule grants capabilities on a path relative to a namespace's KV prefix.
type Rule struct {
	Path         string
	Capabilities []string
	// Absolute: Path is a whole Vault path (a VaultServer's grant, such as
	// database/creds/shop), not one under the namespace's KV prefix.
	Absolute bool
}

// capabilityOrder is the order capabilities are written in, so that the same
// rules always render to the same text.
var capabilityOrder = []string{"create", "read", "update", "patch", "delete", "list"}

// metadataCapabilities are the ones that KV version 2 checks on the
// metadata/ path rather than on data/.
var metadataCapabilities = []string{"read", "list"}

// Owner is the VaultApp a policy was written for, and the cluster it lives
// in: several clusters may write to one Vault, and the same namespace/name
// may exist in each.
type Owner struct {
	Namespace string
	Name      string
	UID       string
	// Cluster is the identity of the writing operator's cluster; empty in
	// the marks of releases before it was written.
	Cluster string
	// ClusterID tells two clusters of one name apart (the kube-system
	// namespace's UID); in the mark only where it differs from Cluster
	// (and read back empty where the mark has none).
	ClusterID string
}

// Ownership markers: the first line of every policy the operator writes.
// Vault has no metadata on ACL policies (nor, outside Enterprise, on
// Kubernetes-auth roles), so the mark is in the text. A policy released by
// deletionPolicy Retain carries the retained mark instead: it is no longer
// the operator's, and is neither repaired nor removed.
const (
	managedMark  = "# Managed by vault-keycloak-operator for VaultApp "
	retainedMark = "# Retained by vault-keycloak-operator from VaultApp "
)

// The UID is absent from the policies 0.1 wrote ("... for VaultApp ns/name."),
// the cluster from those of every release before it ("... (uid U)."). The
// releases before read a mark with a cluster as no mark at all: they
// neither adopt nor sweep what a newer operator wrote.
var markPattern = regexp.MustCompile(`^# (Managed|Retained) by vault-keycloak-operator (?:for|from) VaultApp ([a-z0-9-]+)/([^ ]+?)(?: \(uid ([^) ]+)\))?(?: in cluster ([a-z0-9][-a-z0-9]*)(?: \(id ([^) ]+)\))?)?\.$`)

// PolicyMark is what a policy's first line says of who wrote it.
type PolicyMark struct {
	Owner Owner
	// Managed: written and kept by the operator. Retained: released by it.
	Managed, Retained bool
}

// MarkOf reads the ownership mark of a policy text; the zero PolicyMark when
// the text has none (the operator did not write it).
func MarkOf(text string) PolicyMark {
	first, _, _ := strings.Cut(text, "\n")
	m := markPattern.FindStringSubmatch(first)
	if m == nil {
		return PolicyMark{}
	}
	owner := Owner{Namespace: m[2], Name: m[3], UID: m[4], Cluster: m[5], ClusterID: m[6]}
	return PolicyMark{Owner: owner, Managed: m[1] == "Managed", Retained: m[1] == "Retained"}
}

func markLine(mark string, o Owner) string {
	line := fmt.Sprintf("%s%s/%s (uid %s)", mark, o.Namespace, o.Name, o.UID)
	if o.Cluster != "" {
		line += " in cluster " + o.Cluster
		if o.ClusterID != "" && o.ClusterID != o.Cluster {
			line += " (id " + o.ClusterID + ")"
		}
	}
	return line + "."
}

// RetainedText is the policy text with its mark turned into the retained
// mark: what stays in Vault after a VaultApp with deletionPolicy Retain.
func RetainedText(text string, o Owner) string {
	_, rest, _ := strings.Cut(text, "\n")
	return markLine(retainedMark, o) + "\n" + rest
}

// KV is where the namespaces' secrets are: a KV version 2 mount, and the
// path each namespace owns in it, with {namespace} standing for the
// namespace ({namespace} alone when empty).
type KV struct {
	Mount, Path string
}

// namespaceVariable stands for the namespace in KV.Path.
const namespaceVariable = "{namespace}"

// Prefix is the path a namespace owns in the mount, without slashes at
// either end: its KV rules are relative to it.
func (k KV) Prefix(namespace string) string {
	if k.Path == "" {
		return namespace
	}
	return strings.ReplaceAll(k.Path, namespaceVariable, namespace)
}

// KV is where this client's Vault keeps the namespaces' secrets.
func (c *Client) KV() KV { return KV{Mount: c.cfg.KVMount, Path: c.cfg.KVPath} }

// RenderPolicy renders the ACL policy of a namespace's rules as HCL, marked
// as written for owner, its KV rules under the namespace's prefix in kv.
// The output depends only on its input (rules sorted and merged by path,
// capabilities in a fixed order), so comparing it with what Vault holds
// tells whether a write is needed. A plain function, so that policy text is
// tested without a Vault.
func RenderPolicy(kv KV, owner Owner, rules []Rule) string {
	kvMount, prefix := kv.Mount, kv.Prefix(owner.Namespace)
	relative, absolute := map[string][]string{}, map[string][]string{}
	for _, r := range rules {
		if r.Absolute {
			absolute[r.Path] = append(absolute[r.Path], r.Capabilities...)
		} else {
			relative[r.Path] = append(relative[r.Path], r.Capabilities...)
		}
	}

	var b strings.Builder
	b.WriteString(markLine(managedMark, owner) + "\n")
	b.WriteString("# Edits made here are reverted at the next refresh.\n")
	for _, p := range sortedKeys(relative) {
		caps := ordered(relative[p], capabilityOrder)
		writePath(&b, fmt.Sprintf("%s/data/%s/%s", kvMount, prefix, p), caps)
		if meta := ordered(caps, metadataCapabilities); len(meta) > 0 {
			writePath(&b, fmt.Sprintf("%s/metadata/%s/%s", kvMount, prefix, p), meta)
		}
	}
	// Paths a VaultServer grants, after the KV ones: a policy without any
	// renders as it always has.
	for _, p := range sortedKeys(absolute) {
		writePath(&b, p, ordered(absolute[p], capabilityOrder))
	}
	return b.String()
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
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
	return c.readPolicyText(ctx, OpReadPolicy, name)
}

// readPolicyText reads a policy's text, counted as op.
func (c *Client) readPolicyText(ctx context.Context, op, name string) (string, bool, error) {
	var text string
	var found bool
	err := c.do(ctx, op, func() (bool, error) {
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
	// Noted even when it failed: a write that timed out may have landed.
	c.note(kindPolicy, name, true)
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
	c.note(kindPolicy, name, false)
	return nil
}

// ListPolicies returns the names of the ACL policies that start with prefix.
func (c *Client) ListPolicies(ctx context.Context, prefix string) ([]string, error) {
	var names []string
	err := c.do(ctx, OpListPolicies, func() (bool, error) {
		secret, err := c.api.Logical().ListWithContext(ctx, "sys/policies/acl")
		if err != nil || secret == nil || secret.Data == nil {
			return false, err
		}
		for _, n := range stringList(secret.Data["keys"]) {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list policies: %w", err)
	}
	return names, nil
}
