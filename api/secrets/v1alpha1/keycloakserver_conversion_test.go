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

	"github.com/carbogame/vault-keycloak-operator/api/conversiontest"
	"github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func TestKeycloakServerRoundTrip(t *testing.T) {
	conversiontest.RoundTrip(t,
		func() *v1beta1.KeycloakServer { return &v1beta1.KeycloakServer{} },
		func() *KeycloakServer { return &KeycloakServer{} })
}

// FuzzKeycloakServerConversion: any v1alpha1 object is refused with a field
// error or round-trips losslessly; seeded from the samples.
func FuzzKeycloakServerConversion(f *testing.F) {
	conversiontest.SeedSamples(f, "keycloakserver")
	f.Fuzz(func(t *testing.T, data []byte) {
		conversiontest.FuzzSpoke(t, data, func() *v1beta1.KeycloakServer { return &v1beta1.KeycloakServer{} },
			func() *KeycloakServer { return &KeycloakServer{} }, ConversionDataAnnotation)
	})
}
