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
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestRenderPolicyGolden(t *testing.T) {
	owner := Owner{Namespace: "shop", Name: "api", UID: "0b6f9c1e-5a4e-4f0b-9a55-1f2d3c4b5a69", Cluster: "eu-prod-1"}
	// Out of order, duplicated and split across rules: the text is the same
	// for every equivalent set of rules.
	rules := []Rule{
		{Path: "stripe", Capabilities: []string{"update", "create"}},
		{Path: "db/*", Capabilities: []string{"list", "read"}},
		{Path: "stripe", Capabilities: []string{"read", "create"}},
	}
	got := RenderPolicy(KV{Mount: "secret"}, owner, rules)
	golden := filepath.Join("testdata", "policy.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("policy text changed (go test ./internal/vaultclient -update rewrites the golden file):\n%s", got)
	}
	if again := RenderPolicy(KV{Mount: "secret"}, owner, []Rule{rules[2], rules[1], rules[0]}); again != got {
		t.Fatalf("rule order changed the text:\n%s", again)
	}
}

func TestMarks(t *testing.T) {
	owner := Owner{Namespace: "shop", Name: "api.v2", UID: "0b6f9c1e-5a4e-4f0b-9a55-1f2d3c4b5a69", Cluster: "eu-prod-1"}
	text := RenderPolicy(KV{Mount: "secret"}, owner, []Rule{{Path: "db", Capabilities: []string{"read"}}})
	if m := MarkOf(text); !m.Managed || m.Retained || m.Owner != owner {
		t.Fatalf("MarkOf(rendered) = %+v", m)
	}
	retained := RetainedText(text, owner)
	if m := MarkOf(retained); m.Managed || !m.Retained || m.Owner != owner {
		t.Fatalf("MarkOf(retained) = %+v", m)
	}
	// The default identity, the kube-system namespace's UID, is a cluster too.
	byUID := Owner{Namespace: "shop", Name: "api", UID: "u1", Cluster: "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"}
	if m := MarkOf(RenderPolicy(KV{Mount: "secret"}, byUID, nil)); m.Owner != byUID {
		t.Fatalf("MarkOf(marked by a kube-system UID) = %+v", m)
	}
	// What the releases before the cluster identity wrote: the UID alone.
	if m := MarkOf("# Managed by vault-keycloak-operator for VaultApp shop/api (uid u1).\n"); !m.Managed || m.Owner != (Owner{Namespace: "shop", Name: "api", UID: "u1"}) {
		t.Fatalf("MarkOf(0.2 policy) = %+v", m)
	}
	// What 0.1 wrote: the mark without a UID.
	if m := MarkOf("# Managed by vault-keycloak-operator for VaultApp shop/api.v2.\n# Edits..."); !m.Managed || m.Owner != (Owner{Namespace: "shop", Name: "api.v2"}) {
		t.Fatalf("MarkOf(0.1 policy) = %+v", m)
	}
	for _, foreign := range []string{"", `path "x" {}`, "# Managed by someone else\n", "# Managed by vault-keycloak-operator for VaultApp shop/api (uid).\n",
		"# Managed by vault-keycloak-operator for VaultApp shop/api (uid u1) in cluster .\n",
		"# Managed by vault-keycloak-operator for VaultApp shop/api (uid u1) in cluster East.\n"} {
		if m := MarkOf(foreign); m.Managed || m.Retained {
			t.Errorf("MarkOf(%q) = %+v, want no mark", foreign, m)
		}
	}
}

func TestRenderPolicyWithGrantedPaths(t *testing.T) {
	owner := Owner{Namespace: "shop", Name: "api", UID: "u1", Cluster: "eu"}
	kvOnly := RenderPolicy(KV{Mount: "secret"}, owner, []Rule{{Path: "db", Capabilities: []string{"read"}}})
	got := RenderPolicy(KV{Mount: "secret"}, owner, []Rule{
		{Path: "pki/issue/shop", Capabilities: []string{"update", "create"}, Absolute: true},
		{Path: "db", Capabilities: []string{"read"}},
		{Path: "database/creds/shop", Capabilities: []string{"read"}, Absolute: true},
	})
	want := kvOnly + "\npath \"database/creds/shop\" {\n  capabilities = [\"read\"]\n}\n" +
		"\npath \"pki/issue/shop\" {\n  capabilities = [\"create\", \"update\"]\n}\n"
	if got != want {
		t.Fatalf("policy:\n%s\nwant:\n%s", got, want)
	}
}

// A KV path naming the cluster puts the namespace's rules under it, data
// and metadata alike; none renders the namespace alone, as before.
func TestRenderPolicyUnderAKVPath(t *testing.T) {
	owner := Owner{Namespace: "shop", Name: "api", UID: "1", Cluster: "eu-1"}
	rules := []Rule{{Path: "db/*", Capabilities: []string{"read", "list"}}}
	got := RenderPolicy(KV{Mount: "secret", Path: "eu-1/{namespace}"}, owner, rules)
	for _, want := range []string{`path "secret/data/eu-1/shop/db/*"`, `path "secret/metadata/eu-1/shop/db/*"`} {
		if !strings.Contains(got, want) {
			t.Errorf("policy lacks %s:\n%s", want, got)
		}
	}
	if RenderPolicy(KV{Mount: "secret", Path: "{namespace}"}, owner, rules) != RenderPolicy(KV{Mount: "secret"}, owner, rules) {
		t.Error("the default path renders otherwise than none")
	}
}
