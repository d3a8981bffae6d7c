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
	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// FuzzKeycloakServerAdmission: any KeycloakServer the webhooks see is
// refused with field errors, or admitted and then round-trips losslessly
// through v1alpha1.
func FuzzKeycloakServerAdmission(f *testing.F) {
	conversiontest.SeedSamples(f, "secrets_v1beta1_keycloakserver")
	f.Fuzz(func(t *testing.T, data []byte) {
		var s secretsv1beta1.KeycloakServer
		if json.Unmarshal(data, &s) != nil {
			return
		}
		ctx := context.Background()
		if err := (&KeycloakServerDefaulter{}).Default(ctx, &s); err != nil {
			t.Fatalf("defaulting failed: %v", err)
		}
		if _, err := (&KeycloakServerValidator{}).ValidateCreate(ctx, &s); err != nil {
			conversiontest.RefusedWithFieldErrors(t, err)
			return
		}
		conversiontest.HubRoundTrip(t, &s, func() *secretsv1beta1.KeycloakServer { return &secretsv1beta1.KeycloakServer{} },
			func() *secretsv1alpha1.KeycloakServer { return &secretsv1alpha1.KeycloakServer{} })
	})
}
