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

package keycloak_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// TestAdmissionRejectsBrokenCredentials checks the exact message of each
// rule, through the real API server and webhooks.
func TestAdmissionRejectsBrokenCredentials(t *testing.T) {
	ctx := context.Background()
	ns := op.NewNamespace(t, nil)
	server := newServer(t, kc, ns)
	denied := func(msg string) string {
		return `admission webhook "vkeycloakclientcredential-v1beta1.secrets.carbogame.com" denied the request: KeycloakClientCredential.secrets.carbogame.com "bad" is invalid: ` + msg
	}
	cases := []struct {
		name   string
		mutate func(*secretsv1beta1.KeycloakClientCredential)
		want   string
	}{
		{"refresh too often", func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.RefreshInterval = &metav1.Duration{Duration: 10 * time.Second}
		},
			denied(`spec.refreshInterval: Invalid value: "10s": must be at least 30s`)},
		{"rotation too often", func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Minute}}
		}, denied(`spec.rotation.interval: Invalid value: "1m0s": must be at least 1h0m0s (or unset: rotations on request only)`)},
		{"grace period too short", func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Second}}
		}, denied(`spec.rotation.gracePeriod: Invalid value: "1s": must be between 1m0s and 24h0m0s`)},
		{"grace period as long as the interval", func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}, GracePeriod: &metav1.Duration{Duration: time.Hour}}
		}, denied(`spec.rotation.gracePeriod: Invalid value: "1h0m0s": must be shorter than spec.rotation.interval (1h0m0s)`)},
		{"previous secret under a key already used", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.Keys.PreviousClientSecret = "secret" },
			denied(`spec.target.keys.previousClientSecret: Duplicate value: "secret (also the key of clientSecret; each value needs its own key)"`)},
		{"invalid Secret name", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.SecretName = "Gitea_Creds" },
			denied(`spec.target.secretName: Invalid value: "Gitea_Creds": must be a Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		{"same key twice", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.Keys.ClientID = "secret" },
			denied(`spec.target.keys.clientSecret: Duplicate value: "secret (also the key of clientId; each value needs its own key)"`)},
		{"invalid key", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.Keys.IssuerURL = "issuer url" },
			denied(`spec.target.keys.issuerURL: Invalid value: "issuer url": must be a Secret key: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`)},
		{"reserved label", func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Target.Labels = map[string]string{"app.kubernetes.io/managed-by": "me"}
		}, denied(`spec.target.labels[app.kubernetes.io/managed-by]: Forbidden: is reserved: keys under kubernetes.io/, k8s.io/ and the operator's own prefixes (secrets.carbogame.com/, vault.exemple.com/) are set only by Kubernetes and the operator`)},
		{"realm that is not a plain name", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Source.Realm = "apps/../master" },
			denied(`spec.source.realm: Invalid value: "apps/../master": must be a plain realm name: letters, digits, ".", "_" and "-", starting and ending with a letter or digit, at most 255 characters`)},
		{"invalid namespace", func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.Namespaces = []string{"Team.A"} },
			denied(`spec.target.namespaces[0]: Invalid value: "Team.A": must be a namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := credential(ns, "bad", server, "any")
			tc.mutate(k)
			err := op.Client.Create(ctx, k)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("message:\n%v\nwant:\n%s", err, tc.want)
			}
		})
	}

	t.Run("v1alpha1 fields named in v1alpha1 terms", func(t *testing.T) {
		alpha := &secretsv1alpha1.KeycloakClientCredential{
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
			Spec: secretsv1alpha1.KeycloakClientCredentialSpec{
				Source: secretsv1alpha1.Source{KeycloakServer: server, Realm: realm, ClientID: "any"},
				Target: secretsv1alpha1.Target{SecretName: "bad", RefreshPeriod: &metav1.Duration{Duration: time.Second},
					Fields: secretsv1alpha1.Fields{ClientID: "same", ClientSecret: "same"}},
			},
		}
		err := op.Client.Create(ctx, alpha)
		want := denied(`[spec.target.refreshPeriod: Invalid value: "1s": must be at least 30s, spec.target.fields.clientSecret: Duplicate value: "same (also the key of clientId; each value needs its own key)"]`)
		if err == nil || err.Error() != want {
			t.Fatalf("message:\n%v\nwant:\n%s", err, want)
		}
	})

	t.Run("server that does not exist yet is a warning", func(t *testing.T) {
		k := credential(ns, "early", "not-yet", "any")
		if err := op.Client.Create(ctx, k); err != nil {
			t.Fatalf("rejected: %v", err)
		}
	})

	t.Run("KeycloakServer", func(t *testing.T) {
		s := &secretsv1beta1.KeycloakServer{
			ObjectMeta: metav1.ObjectMeta{Name: "bad-server"},
			Spec: secretsv1beta1.KeycloakServerSpec{URL: "https://", CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "creds"},
				CABundle: []byte("not PEM"), AllowedNamespaces: []string{"ok", "Not OK"}},
		}
		err := op.Client.Create(ctx, s)
		want := `admission webhook "vkeycloakserver-v1beta1.secrets.carbogame.com" denied the request: KeycloakServer.secrets.carbogame.com "bad-server" is invalid: [spec.url: Invalid value: "https://": must be an absolute http or https URL, such as https://sso.example.com, spec.caBundle: Invalid value: "(PEM)": must hold at least one PEM-encoded certificate, spec.allowedNamespaces[1]: Invalid value: "Not OK": must be a namespace name or "*": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]`
		if err == nil || err.Error() != want {
			t.Fatalf("message:\n%v\nwant:\n%s", err, want)
		}
	})
}
