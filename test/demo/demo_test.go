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

package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// TestDemoOnePass runs 'make demo' in its one-pass form against the Vault
// and Keycloak of the test run, and 'make demo VAULT=openbao' against an
// OpenBao of its own, and checks what a newcomer would read.
func TestDemoOnePass(t *testing.T) {
	for _, fromEnv := range []func() error{
		func() error { _, err := harness.VaultFromEnv(); return err },
		func() error { _, err := harness.KeycloakFromEnv(); return err },
	} {
		if err := fromEnv(); err != nil {
			t.Fatal(err)
		}
	}
	for server, first := range map[string]string{vaultServer: `(?m)^Vault    http://`, openBaoServer: `(?m)^OpenBao  http://`} {
		t.Run(server, func(t *testing.T) { demoOnePass(t, server, first) })
	}
}

func demoOnePass(t *testing.T, server, first string) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, true, server); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		first,
		`(?m)^VaultServer central-vault: Connected=True after `,
		`(?m)^VaultApp vault.exemple.com/v1beta1 shop-api: Ready=True$`,
		`(?m)^VaultApp vault.exemple.com/v1alpha1 legacy-api: Ready=True$`,
		`(?m)^KeycloakServer secrets.carbogame.com/v1beta1 prod-keycloak: Connected=True$`,
		`(?m)^KeycloakServer secrets.carbogame.com/v1alpha1 legacy-keycloak: Connected=True$`,
		`(?m)^KeycloakClientCredential secrets.carbogame.com/v1beta1 gitea: Ready=True$`,
		`(?m)^KeycloakClientCredential secrets.carbogame.com/v1alpha1 gitea-legacy: Ready=True$`,
		`(?m)^policy drift repaired after \d+s`,
		`(?m)^deleted Secret re-created after \d+(\.\d+)?m?s`,
		`Secret default/gitea-secret-creds \(Opaque\): keys issuer, key, secret`,
		`path "secret/data/default/db/\*" \{`,
		`Type:\s+Ready`,
		`(?m)^demo: all 6 samples ready; policy drift repaired; deleted Secret re-created$`,
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("demo output lacks %s", want)
		}
	}
	k, _ := harness.KeycloakFromEnv()
	a, err := k.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := a.ClientSecret(ctx, "operator", "gitea")
	if err != nil || secret == "" {
		t.Fatalf("read gitea's secret: %v", err)
	}
	if strings.Contains(text, secret) {
		t.Error("the demo printed a client secret")
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", text)
	}
}
