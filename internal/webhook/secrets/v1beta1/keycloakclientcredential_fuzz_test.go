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

// FuzzKeycloakClientCredentialAdmission: any KeycloakClientCredential the
// webhooks see is refused with field errors, or admitted and then
// round-trips losslessly through v1alpha1.
func FuzzKeycloakClientCredentialAdmission(f *testing.F) {
	conversiontest.SeedSamples(f, "secrets_v1beta1_keycloakclientcredential")
	v := credentialValidator()
	f.Fuzz(func(t *testing.T, data []byte) {
		var k secretsv1beta1.KeycloakClientCredential
		if json.Unmarshal(data, &k) != nil {
			return
		}
		k.Namespace = "team-a"
		k.Spec.Source.ServerRef.Name = "kc" // the server the validator knows; its grants decide
		ctx := context.Background()
		if err := (&KeycloakClientCredentialDefaulter{}).Default(ctx, &k); err != nil {
			t.Fatalf("defaulting failed: %v", err)
		}
		if _, err := v.ValidateCreate(ctx, &k); err != nil {
			conversiontest.RefusedWithFieldErrors(t, err)
			return
		}
		conversiontest.HubRoundTrip(t, &k, func() *secretsv1beta1.KeycloakClientCredential { return &secretsv1beta1.KeycloakClientCredential{} },
			func() *secretsv1alpha1.KeycloakClientCredential { return &secretsv1alpha1.KeycloakClientCredential{} })
	})
}
