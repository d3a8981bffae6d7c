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

package migration

import (
	"testing"

	"k8s.io/apiserver/pkg/endpoints/discovery"
)

func TestStorageVersionHashIsTheAPIServers(t *testing.T) {
	for _, gvk := range [][3]string{
		{"vault.exemple.com", "v1beta1", "VaultApp"},
		{"secrets.carbogame.com", "v1alpha1", "KeycloakServer"},
		{"", "v1", "Pod"},
	} {
		if got, want := storageVersionHash(gvk[0], gvk[1], gvk[2]), discovery.StorageVersionHash(gvk[0], gvk[1], gvk[2]); got != want {
			t.Errorf("%v: %s, the API server publishes %s", gvk, got, want)
		}
	}
}
