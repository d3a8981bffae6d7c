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

package v1alpha1

import (
	"testing"

	"sigs.k8s.io/randfill"

	"github.com/carbogame/vault-keycloak-operator/api/conversiontest"
	"github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

func TestVaultAppRoundTrip(t *testing.T) {
	conversiontest.RoundTrip(t,
		func() *v1beta1.VaultApp { return &v1beta1.VaultApp{} },
		func() *VaultApp { return &VaultApp{} },
		// The schema admits these presets only; the others are refused below.
		func(p *VaultPolicyPreset, c randfill.Continue) {
			*p = []VaultPolicyPreset{"", PresetRead, PresetReadWrite}[c.Intn(3)]
		})
}

// An unknown preset is refused by name, not converted: the API server
// converts a v1alpha1 request for the mutating webhook before it checks
// the schema's enum, and the way back would make it "read".
func TestVaultAppUnknownPresetIsRefused(t *testing.T) {
	src := &VaultApp{Spec: VaultAppSpec{VaultPolicy: "ReadWrite", SecretPaths: []string{"db"}}}
	err := src.ConvertTo(&v1beta1.VaultApp{})
	const want = `spec.vaultPolicy: Unsupported value: "ReadWrite": supported values: "read", "read-write"`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// FuzzVaultAppConversion: any v1alpha1 VaultApp is refused with a field
// error or round-trips losslessly; seeded from the samples.
func FuzzVaultAppConversion(f *testing.F) {
	conversiontest.SeedSamples(f, "vault_")
	f.Fuzz(func(t *testing.T, data []byte) {
		conversiontest.FuzzSpoke(t, data, func() *v1beta1.VaultApp { return &v1beta1.VaultApp{} },
			func() *VaultApp { return &VaultApp{} }, ConversionDataAnnotation)
	})
}
