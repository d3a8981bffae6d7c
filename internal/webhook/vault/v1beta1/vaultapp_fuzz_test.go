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

package v1beta1

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/carbogame/vault-keycloak-operator/api/conversiontest"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// FuzzVaultAppAdmission: any VaultApp the defaulting and validating webhooks
// see is refused with field errors (never a panic, never another kind of
// error), or admitted and then round-trips losslessly through v1alpha1.
func FuzzVaultAppAdmission(f *testing.F) {
	conversiontest.SeedSamples(f, "vault_v1beta1")
	v := validator(map[string]string{
		tenancy.AllowedCapabilitiesAnnotation: "create,read,update,patch,delete,list",
		tenancy.AllowRetainAnnotation:         "true",
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		var a vaultv1beta1.VaultApp
		if json.Unmarshal(data, &a) != nil {
			return
		}
		a.Namespace = "shop"
		ctx := context.Background()
		if err := (&VaultAppDefaulter{}).Default(ctx, &a); err != nil {
			t.Fatalf("defaulting failed: %v", err)
		}
		if _, err := v.ValidateCreate(ctx, &a); err != nil {
			conversiontest.RefusedWithFieldErrors(t, err)
			return
		}
		conversiontest.HubRoundTrip(t, &a, func() *vaultv1beta1.VaultApp { return &vaultv1beta1.VaultApp{} },
			func() *vaultv1alpha1.VaultApp { return &vaultv1alpha1.VaultApp{} })
	})
}
