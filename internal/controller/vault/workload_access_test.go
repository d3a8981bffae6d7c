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
	"reflect"
	"testing"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

func TestWorkloadAccessSaysWhereAndHowToLogIn(t *testing.T) {
	// Each server grants namespace shop.
	server := func(spec vaultv1beta1.VaultServerSpec) *vaultv1beta1.VaultServer {
		spec.Access = []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}}}
		return &vaultv1beta1.VaultServer{Spec: spec}
	}
	for _, tc := range []struct {
		name   string
		server *vaultv1beta1.VaultServer
		want   *vaultv1beta1.VaultAppAccess
	}{
		{"a server that grants the namespace nothing: nothing of it is shown",
			&vaultv1beta1.VaultServer{Spec: vaultv1beta1.VaultServerSpec{Address: "https://vault:8200",
				AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
				Access:  []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"other"}}}}}, nil},
		{"kubernetes auth, the default KV mount",
			server(vaultv1beta1.VaultServerSpec{Address: "https://vault:8200",
				AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes-eu-1"}}}}),
			&vaultv1beta1.VaultAppAccess{Address: "https://vault:8200", LoginPath: "auth/kubernetes-eu-1/login",
				Role: "app.shop.api", KVMount: "secret", KVPrefix: "shop/"}},
		{"JWT auth: its audience; a Vault namespace and a KV mount of its own",
			server(vaultv1beta1.VaultServerSpec{Address: "https://vault:8200", Namespace: "team-a", KVMount: "kv",
				AppAuth: vaultv1beta1.VaultAuthMethod{JWT: &vaultv1beta1.VaultJWTAuthMount{
					VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "jwt-eu-1"}, Audience: "vault"}}}),
			&vaultv1beta1.VaultAppAccess{Address: "https://vault:8200", Namespace: "team-a", LoginPath: "auth/jwt-eu-1/login",
				Audience: "vault", Role: "app.shop.api", KVMount: "kv", KVPrefix: "shop/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Destination{Spec: tc.server, Where: LocationOf(tc.server, "uid-1")}
			if got := workloadAccess(d.Where, d.grantsNamespace("shop"), "shop", "app.shop.api"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
