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

package manager

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	vaultcontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// The environment's Vault, as the flags of releases before VaultServer
// configure it, is at the Location of the VaultServer that the upgrading
// guide tells the admin to write for it; any field that differs makes it
// another place.
func TestEnvironmentsVaultHasTheLocationOfItsVaultServer(t *testing.T) {
	cfg := vaultclient.ConfigFromEnv()
	cfg.Address = "https://vault.example.com:8200/"
	const uid = "5f0c2b1e-uid"
	id, err := clusterIdentity(uid, "", "")
	if err != nil {
		t.Fatal(err)
	}
	env := envLocation(cfg, id)
	twin := func(edit func(*vaultv1beta1.VaultServerSpec)) *vaultv1beta1.VaultServer {
		s := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "vault"}, Spec: vaultv1beta1.VaultServerSpec{
			Address: "https://vault.example.com:8200",
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
		}}
		edit(&s.Spec)
		return s
	}
	for _, tt := range []struct {
		name string
		edit func(*vaultv1beta1.VaultServerSpec)
		same bool
	}{
		{"the defaults of both", func(*vaultv1beta1.VaultServerSpec) {}, true},
		{"the KV mount written out", func(s *vaultv1beta1.VaultServerSpec) { s.KVMount = "secret" }, true},
		{"another address", func(s *vaultv1beta1.VaultServerSpec) { s.Address = "https://vault-2.example.com:8200" }, false},
		{"a cluster name", func(s *vaultv1beta1.VaultServerSpec) { s.Cluster = "eu-1" }, false},
		{"a name prefix", func(s *vaultv1beta1.VaultServerSpec) { s.NamePrefix = "eu-1" }, false},
		{"another KV mount", func(s *vaultv1beta1.VaultServerSpec) { s.KVMount = "kv" }, false},
		{"a Vault namespace", func(s *vaultv1beta1.VaultServerSpec) { s.Namespace = "team-a" }, false},
		{"another auth mount", func(s *vaultv1beta1.VaultServerSpec) {
			s.AppAuth.Kubernetes.Mount = "kubernetes-eu-1"
		}, false},
		{"JWT roles", func(s *vaultv1beta1.VaultServerSpec) {
			s.AppAuth = vaultv1beta1.VaultAuthMethod{JWT: &vaultv1beta1.VaultJWTAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}, Audience: "vault"}}
		}, false},
	} {
		if got := vaultcontroller.LocationOf(twin(tt.edit), uid).Same(env); got != tt.same {
			t.Errorf("%s: same Location %v, want %v (environment %+v)", tt.name, got, tt.same, env)
		}
	}
	// Named, the cluster is its name on both sides.
	named, err := clusterIdentity(uid, "eu-1", "eu-1")
	if err != nil {
		t.Fatal(err)
	}
	s := twin(func(s *vaultv1beta1.VaultServerSpec) { s.Cluster, s.NamePrefix = "eu-1", "eu-1" })
	if !vaultcontroller.LocationOf(s, uid).Same(envLocation(cfg, named)) {
		t.Errorf("a named cluster with a prefix: not the same Location")
	}
}
