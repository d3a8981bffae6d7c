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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

func credentialValidator(objs ...client.Object) *KeycloakClientCredentialValidator {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = secretsv1beta1.AddToScheme(scheme)
	objs = append(objs,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "typed-ok", Annotations: map[string]string{tenancy.AllowedSecretTypesAnnotation: "kubernetes.io/basic-auth"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "login", Namespace: "vko-system"}, Data: map[string][]byte{"clientId": []byte("vko-operator")}},
		&secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "kc"}, Spec: secretsv1beta1.KeycloakServerSpec{
			URL: "https://sso.test", Realm: "master", AuthType: secretsv1beta1.AuthClientCredentials,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "login"},
			Access: []secretsv1beta1.AccessGrant{
				{Namespaces: []string{"team-a"}, Realms: []string{"apps", "master"}, ClientIDs: []string{"*"}},
			},
		}})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	return &KeycloakClientCredentialValidator{Client: c, Secrets: c, OperatorNamespace: "vko-system"}
}

func credential(mutate func(*secretsv1beta1.KeycloakClientCredential)) *secretsv1beta1.KeycloakClientCredential {
	k := &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "kc"}, Realm: "apps", ClientID: "web"},
			Target: secretsv1beta1.TargetSpec{SecretName: "web", Keys: secretsv1beta1.SecretKeys{ClientSecret: "secret"}},
		},
	}
	if mutate != nil {
		mutate(k)
	}
	return k
}

func TestKeycloakClientCredentialAdmissionMessages(t *testing.T) {
	const prefix = `KeycloakClientCredential.secrets.carbogame.com "web" is invalid: `
	tests := []struct {
		name string
		kcc  *secretsv1beta1.KeycloakClientCredential
		want string // "" when admitted; else the message
	}{
		{"granted", credential(nil), ""},
		{"the operator's login client, read from its credentials Secret", credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Source.Realm, k.Spec.Source.ClientID = "master", "vko-operator"
		}), prefix + `spec.source.clientId: Forbidden: client "vko-operator" in realm "master" is the operator's own login client: it is never readable or rotatable through a KeycloakClientCredential`},
		{"rotation without the grant", credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
		}), prefix + `spec.rotation: Forbidden: rotating client "web" is not granted to namespace "team-a" by KeycloakServer "kc": no grant that covers it sets rotate: true`},
		{"a realm that is a path", credential(func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Source.Realm = "apps/../master" }),
			prefix + `spec.source.realm: Invalid value: "apps/../master": must be a plain realm name: letters, digits, ".", "_" and "-", starting and ending with a letter or digit, at most 255 characters`},
		{"a Secret type the target does not allow", credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Target.Type, k.Spec.Target.Keys.ClientSecret = corev1.SecretTypeBasicAuth, corev1.BasicAuthPasswordKey
		}), prefix + `spec.target.type: Forbidden: target 0: namespace team-a does not allow Secrets of type "kubernetes.io/basic-auth": Opaque only, and the types its secrets.carbogame.com/allowed-secret-types annotation lists (none)`},
		{"a Secret type the target allows", credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Target.Type, k.Spec.Target.Keys.ClientSecret, k.Spec.Target.Namespaces = corev1.SecretTypeBasicAuth, corev1.BasicAuthPasswordKey, []string{"typed-ok"}
		}), ""},
		{"a Secret type whose keys the spec cannot produce", credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Target.Type, k.Spec.Target.Namespaces = corev1.SecretTypeTLS, []string{"typed-ok"}
		}), prefix + `[spec.target.type: Invalid value: "kubernetes.io/tls": a Secret of this type must hold the key tls.crt: name it in spec.target.keys, `},
		{"a reserved annotation", credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Target.Annotations = map[string]string{"kubernetes.io/service-account.name": "default"}
		}), prefix + `spec.target.annotations[kubernetes.io/service-account.name]: Forbidden: is reserved`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := credentialValidator().ValidateCreate(context.Background(), tt.kcc)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("message:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

func TestRequestsByAnnotationAdmission(t *testing.T) {
	const prefix = `KeycloakClientCredential.secrets.carbogame.com "web" is invalid: `
	rotatable := &secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "kc-rot"}, Spec: secretsv1beta1.KeycloakServerSpec{
		URL: "https://sso.test", AuthType: secretsv1beta1.AuthClientCredentials, CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "login"},
		Access: []secretsv1beta1.AccessGrant{{Namespaces: []string{"team-a"}, Realms: []string{"apps"}, ClientIDs: []string{"web"}, Rotate: true}},
	}}
	asking := func(server string, annotations map[string]string) *secretsv1beta1.KeycloakClientCredential {
		return credential(func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Source.ServerRef.Name = server
			k.Annotations = annotations
		})
	}
	tests := []struct {
		name     string
		old, kcc *secretsv1beta1.KeycloakClientCredential
		want     string
	}{
		{"a refresh request, anyone may", asking("kc", nil), asking("kc", map[string]string{secretsv1beta1.RefreshRequestAnnotation: "ticket-1"}), ""},
		{"a refresh request with a bad id", asking("kc", nil), asking("kc", map[string]string{secretsv1beta1.RefreshRequestAnnotation: "ticket 1"}),
			prefix + `metadata.annotations[secrets.carbogame.com/refresh-request]: Invalid value: "ticket 1": a request id is 1 to 63 letters`},
		{"a rotation request without the rotate grant", asking("kc", nil), asking("kc", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"}),
			prefix + `metadata.annotations[secrets.carbogame.com/rotation-request]: Forbidden: rotating client "web" is not granted to namespace "team-a" by KeycloakServer "kc": no grant that covers it sets rotate: true`},
		{"a rotation request with the rotate grant", asking("kc-rot", nil), asking("kc-rot", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"}), ""},
		{"a rotation request kept while the grant was taken back", asking("kc", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"}),
			asking("kc", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1", "other": "x"}), ""},
		{"a rotation request a minute after the last rotation", func() *secretsv1beta1.KeycloakClientCredential {
			k := asking("kc-rot", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"})
			k.Status.LastRotationTime = &metav1.Time{Time: time.Now().Add(-time.Minute)}
			return k
		}(), asking("kc-rot", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r2"}),
			prefix + `metadata.annotations[secrets.carbogame.com/rotation-request]: Forbidden: the client secret was rotated at `},
		{"a rotation request on a server that does not exist", asking("gone", nil), asking("gone", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"}),
			prefix + `metadata.annotations[secrets.carbogame.com/rotation-request]: Forbidden: KeycloakServer "gone" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := credentialValidator(rotatable).ValidateUpdate(context.Background(), tt.old, tt.kcc)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("message:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
	// A create that asks at once is checked the same way.
	if _, err := credentialValidator().ValidateCreate(context.Background(), asking("kc", map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"})); err == nil {
		t.Fatal("a create with a rotation request the namespace may not make was admitted")
	}
}

func TestKeycloakServerAdmission(t *testing.T) {
	s := &secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "kc"}, Spec: secretsv1beta1.KeycloakServerSpec{
		URL: "https://sso.test", CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "login"},
		Access: []secretsv1beta1.AccessGrant{{Namespaces: []string{"team-*-x"}, Realms: []string{"apps"}, ClientIDs: []string{"*"}}},
	}}
	_, err := (&KeycloakServerValidator{}).ValidateCreate(context.Background(), s)
	want := `KeycloakServer.secrets.carbogame.com "kc" is invalid: spec.access[0].namespaces[0]: Invalid value: "team-*-x": must be an exact name, a prefix followed by "*" (such as "team-a-*"), or "*" alone`
	if err == nil || err.Error() != want {
		t.Fatalf("message:\n%v\nwant:\n%s", err, want)
	}

	s.Spec.Access[0].Namespaces = []string{"team-a"}
	s.Spec.AllowedNamespaces = []string{"team-b"}
	warnings, err := (&KeycloakServerValidator{}).ValidateCreate(context.Background(), s)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "spec.allowedNamespaces is deprecated and grants nothing by itself") {
		t.Fatalf("warnings %v, err %v", warnings, err)
	}
}
