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

package tenancy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

func TestValidatePathTemplate(t *testing.T) {
	for _, tt := range []struct {
		template string
		// want is part of the refusal; "" when admitted.
		want string
	}{
		{"secret/data/{namespace}/*", ""},
		{"database/creds/{namespace}-*", ""},
		{"pki/issue/{namespace}", ""},
		{"transit/encrypt/{namespace}-*", ""},
		{"secret/data/{cluster}/{namespace}/*", ""},
		{"{cluster}/data/*", "no glob or variable in the mount"},
		{"secret/data/{clusters}/*", "may use only the variables"},
		{"sys/policies/acl/*", "paths under sys/ are never granted"},
		{"auth/kubernetes/role/{namespace}", "paths under auth/ are never granted"},
		{"identity/entity/*", "paths under identity/ are never granted"},
		{"SYS/mounts", "paths under SYS/ are never granted"},
		{"/secret/data/{namespace}", "must start with a mount"},
		{"secret/data/{namespace}/../other/*", "must not hold a \".\" or \"..\" segment"},
		{"secret/data/*/{namespace}", "\"*\" only as its last character"},
		{"secret//data", "segments separated by single"},
		{"secret/data/{name}/*", "may use only the variables {namespace} and {cluster}"},
		{"secret/data/{namespace/*", "may use only the variables {namespace} and {cluster}"},
		{"secret/data/a b", "may hold only"},
		// Ways around a check of the literal first segment.
		{"+/policies/acl/*", "may hold only"},
		{"secret/+/x", "may hold only"},
		{"s*", "must start with a mount's literal name"},
		{"{namespace}/*", "no glob or variable in the mount"},
		{"kv-{namespace}/data/*", "no glob or variable in the mount"},
		{"a{namespace}/x", "no glob or variable in the mount"},
		{"team-a/sys/policies/acl/*", "paths under sys/ are never granted"},
		{"ns/{namespace}/auth/kubernetes/role/*", "paths under auth/ are never granted"},
		{"secret/Identity/x", "paths under Identity/ are never granted"},
	} {
		errs := ValidatePathTemplate(field.NewPath("t"), tt.template)
		switch {
		case tt.want == "" && len(errs) > 0:
			t.Errorf("%q refused: %v", tt.template, errs)
		case tt.want != "" && !strings.Contains(fmt.Sprint(errs), tt.want):
			t.Errorf("%q: errors %v, want one saying %q", tt.template, errs, tt.want)
		}
	}
}

func vaultServer(grants ...vaultv1beta1.VaultAccessGrant) *vaultv1beta1.VaultServer {
	return &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "central"},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: "https://vault.example.com:8200",
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "vko"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			Access:  grants,
		},
	}
}

func paths(templates ...string) []vaultv1beta1.VaultPathGrant {
	var out []vaultv1beta1.VaultPathGrant
	for _, t := range templates {
		out = append(out, vaultv1beta1.VaultPathGrant{Template: t, Capabilities: []vaultv1beta1.Capability{"read"}})
	}
	return out
}

func TestValidateVaultServer(t *testing.T) {
	ok := vaultServer(vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop", "team-*"}, Paths: paths("database/creds/{namespace}")})
	if errs := ValidateVaultServer(ok); len(errs) > 0 {
		t.Fatalf("a plain server refused: %v", errs)
	}
	perCluster := ok.DeepCopy()
	perCluster.Spec.Cluster, perCluster.Spec.KVPath = "eu-1", "apps/{cluster}/{namespace}"
	perCluster.Spec.Access[0].Paths = paths("secret/data/apps/{cluster}/{namespace}/*")
	if errs := ValidateVaultServer(perCluster); len(errs) > 0 {
		t.Fatalf("a server keeping clusters apart refused: %v", errs)
	}
	for _, tt := range []struct {
		name   string
		mutate func(*vaultv1beta1.VaultServer)
		want   string
	}{
		{"address without scheme", func(s *vaultv1beta1.VaultServer) { s.Spec.Address = "vault:8200" }, "spec.address"},
		{"address with a password", func(s *vaultv1beta1.VaultServer) { s.Spec.Address = "https://u:p@vault:8200" }, "must not hold a user or password"},
		{"both CAs", func(s *vaultv1beta1.VaultServer) {
			s.Spec.CABundle, s.Spec.CASecretRef = []byte("x"), &vaultv1beta1.SecretKeySelector{Name: "ca"}
		}, "set caBundle or caSecretRef, not both"},
		{"CA that is no PEM", func(s *vaultv1beta1.VaultServer) { s.Spec.CABundle = []byte("not a certificate") }, "spec.caBundle"},
		{"namespace pattern with * inside", func(s *vaultv1beta1.VaultServer) { s.Spec.Access[0].Namespaces = []string{"te*am"} }, "spec.access[0].namespaces[0]"},
		{"template under sys/", func(s *vaultv1beta1.VaultServer) { s.Spec.Access[0].Paths = paths("sys/mounts") }, "spec.access[0].paths[0].template"},
		{"{cluster} in a template without spec.cluster", func(s *vaultv1beta1.VaultServer) {
			s.Spec.Access[0].Paths = paths("secret/data/{cluster}/{namespace}/*")
		}, "spec.cluster: Required value: spec.access[0].paths[0].template uses {cluster}"},
		{"{cluster} in kvPath without spec.cluster", func(s *vaultv1beta1.VaultServer) { s.Spec.KVPath = "{cluster}/{namespace}" },
			"spec.cluster: Required value: spec.kvPath uses {cluster}"},
		{"kvPath without {namespace}", func(s *vaultv1beta1.VaultServer) { s.Spec.KVPath = "apps" }, "spec.kvPath: Invalid value: \"apps\": must hold {namespace} once"},
		{"kvPath with {namespace} twice", func(s *vaultv1beta1.VaultServer) { s.Spec.KVPath = "{namespace}/{namespace}" }, "must hold {namespace} once"},
		{"kvPath with {namespace} inside a segment", func(s *vaultv1beta1.VaultServer) { s.Spec.KVPath = "ns-{namespace}" }, "spec.kvPath"},
		{"kvPath leaving its mount", func(s *vaultv1beta1.VaultServer) { s.Spec.KVPath = "../{namespace}" }, "no \".\" or \"..\""},
		{"kvPath with {cluster} twice", func(s *vaultv1beta1.VaultServer) {
			s.Spec.Cluster, s.Spec.KVPath = "eu-1", "{cluster}/{cluster}/{namespace}"
		}, "may hold {cluster} once"},
		{"token TTL over a day", func(s *vaultv1beta1.VaultServer) {
			s.Spec.Access[0].MaxTokenTTL = &metav1.Duration{Duration: 48 * time.Hour}
		}, "spec.access[0].maxTokenTTL"},
	} {
		s := ok.DeepCopy()
		tt.mutate(s)
		if errs := ValidateVaultServer(s); !strings.Contains(fmt.Sprint(errs), tt.want) {
			t.Errorf("%s: errors %v, want one on %s", tt.name, errs, tt.want)
		}
	}
}

func TestVaultServerWarnings(t *testing.T) {
	for _, tt := range []struct {
		grant vaultv1beta1.VaultAccessGrant
		want  string
	}{
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("secret/data/{namespace}/*", "pki/issue/{namespace}")}, ""},
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("database/creds/{namespace}-*")}, `{namespace} shares its segment with "-*"`},
		// database/creds/{namespace} of namespace a-ro is this one of a.
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("database/creds/{namespace}-ro")}, `{namespace} shares its segment with "-ro"`},
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("database/creds/ro-{namespace}")}, `{namespace} shares its segment with "ro-"`},
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("secret/data/shared/*")}, "every namespace granted shares the same paths"},
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("secret/data/{cluster}/{namespace}/*")}, ""},
		// Cluster a's path for namespace b-x is cluster a-b's for x.
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: paths("secret/data/{cluster}-{namespace}/*")}, "{cluster} shares its segment with other text"},
		{vaultv1beta1.VaultAccessGrant{Namespaces: []string{"*"}}, "every namespace, present and future"},
	} {
		got := strings.Join(VaultServerWarnings(vaultServer(tt.grant)), "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("grant %+v: warnings %q, want %q", tt.grant, got, tt.want)
		}
	}
}

func TestVaultPathsWithinTheServersGrants(t *testing.T) {
	s := vaultServer(
		vaultv1beta1.VaultAccessGrant{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}},
			{Template: "pki/issue/{namespace}-*", Capabilities: []vaultv1beta1.Capability{"create", "update"}},
		}},
		vaultv1beta1.VaultAccessGrant{Namespaces: []string{"team-*"}, Paths: paths("transit/encrypt/{namespace}")},
	)
	ask := func(path string, caps ...vaultv1beta1.Capability) *vaultv1beta1.VaultApp {
		return &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
			Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{VaultPaths: []vaultv1beta1.VaultPathRule{{Path: path, Capabilities: caps}}}}}
	}
	for _, tt := range []struct {
		app     *vaultv1beta1.VaultApp
		server  *vaultv1beta1.VaultServer
		want    string // "" when granted
		granted []vaultv1beta1.Capability
	}{
		{ask("database/creds/shop", "read"), s, "", []vaultv1beta1.Capability{"read"}},
		{ask("pki/issue/shop-web", "update"), s, "", []vaultv1beta1.Capability{"update"}},
		{ask("pki/issue/shop-*", "create"), s, "", []vaultv1beta1.Capability{"create"}},
		{ask("database/creds/shop", "read", "update"), s, `update on "database/creds/shop" not granted to namespace "shop" by VaultServer "central": it grants read on database/creds/shop; create, update on pki/issue/shop-*`, []vaultv1beta1.Capability{"read"}},
		{ask("database/creds/other", "read"), s, `read on "database/creds/other" not granted`, nil},
		{ask("database/creds/*", "read"), s, `read on "database/creds/*" not granted`, nil},
		{ask("transit/encrypt/shop", "read"), s, `read on "transit/encrypt/shop" not granted`, nil},
		{ask("sys/policies/acl/x", "read"), s, "paths under sys/ are never granted", nil},
		{ask("database/creds/{namespace}", "read"), s, "must be a path, with no variable", nil},
		{ask("database/creds/shop", "read"), nil, "only a VaultServer's spec.access grants paths outside the namespace's KV prefix", nil},
		{retain(ask("database/creds/shop", "read")), s, "spec.deletionPolicy: Forbidden: Retain does not keep a policy with vaultPaths", []vaultv1beta1.Capability{"read"}},
	} {
		errs := CheckVaultPaths(tt.app, tt.server)
		switch {
		case tt.want == "" && len(errs) > 0:
			t.Errorf("%s refused: %v", tt.app.Spec.Policy.VaultPaths[0].Path, errs)
		case tt.want != "" && !strings.Contains(fmt.Sprint(errs), tt.want):
			t.Errorf("%s: %v, want %q", tt.app.Spec.Policy.VaultPaths[0].Path, errs, tt.want)
		}
		var got []vaultv1beta1.Capability
		if g := GrantedVaultPaths(tt.app, tt.server); len(g) > 0 {
			got = g[0].Capabilities
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.granted) {
			t.Errorf("%s: granted %v, want %v", tt.app.Spec.Policy.VaultPaths[0].Path, got, tt.granted)
		}
	}
}

func retain(a *vaultv1beta1.VaultApp) *vaultv1beta1.VaultApp {
	a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
	return a
}
