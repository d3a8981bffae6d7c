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
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func waitCredential(t testing.TB, key client.ObjectKey, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *secretsv1beta1.KeycloakClientCredential {
	t.Helper()
	return harness.WaitCondition(t, op, key, func(k *secretsv1beta1.KeycloakClientCredential) []metav1.Condition { return k.Status.Conditions },
		typ, status, reason, timeout)
}

func waitServer(t testing.TB, name, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *secretsv1beta1.KeycloakServer {
	t.Helper()
	return harness.WaitCondition(t, op, client.ObjectKey{Name: name}, func(k *secretsv1beta1.KeycloakServer) []metav1.Condition { return k.Status.Conditions },
		typ, status, reason, timeout)
}

// newServer creates a KeycloakServer for the test, logging in to k's master
// realm as the operator's client with the least rights the docs give it,
// granting the namespaces listed every client of the suite's realm,
// rotation included.
func newServer(t testing.TB, k *harness.Keycloak, allowed ...string) string {
	t.Helper()
	return newServerInRealm(t, k, realm, allowed...)
}

// newServerInRealm is newServer granting the clients of realmName.
var serverSeq atomic.Int32

func newServerInRealm(t testing.TB, k *harness.Keycloak, realmName string, allowed ...string) string {
	t.Helper()
	// Cluster-scoped: a random suffix collided now and then across the
	// suite's servers; a counter cannot.
	name := fmt.Sprintf("kc-%04d", serverSeq.Add(1))
	s := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: secretsv1beta1.KeycloakServerSpec{
			URL:                  k.URL,
			AuthType:             secretsv1beta1.AuthClientCredentials,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: operatorCredentials(t, k, name, realmName)},
			Access: []secretsv1beta1.AccessGrant{{
				Namespaces: allowed, Realms: []string{realmName}, ClientIDs: []string{"*"}, Rotate: true,
			}},
		},
	}
	if err := op.Client.Create(context.Background(), s); err != nil {
		t.Fatalf("create KeycloakServer: %v", err)
	}
	return name
}

// operatorCredentials grants the operator's client its roles in realmName
// of k (created in k's master realm the first time) and writes its
// credentials into a Secret of the operator's namespace for server (again
// after k restarted empty, as an admin restores them); it returns the
// Secret's name.
func operatorCredentials(t testing.TB, k *harness.Keycloak, server, realmName string) string {
	t.Helper()
	ctx := context.Background()
	a, err := k.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := a.CreateOperatorClient(ctx, operatorClient, realmName)
	if err != nil {
		t.Fatal(err)
	}
	harness.KeepSecret(secret)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: server + "-credentials", Namespace: operatorNamespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, op.Client, creds, func() error {
		creds.Data = map[string][]byte{"clientId": []byte(operatorClient), "clientSecret": []byte(secret)}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return creds.Name
}

// newClientID creates a confidential client in the suite's realm.
var clientSeq atomic.Int32

func newClientID(t testing.TB, secret string) string {
	t.Helper()
	id := fmt.Sprintf("app-%04d", clientSeq.Add(1)) // the realm is the run's own: no two tests share a client
	if err := createClient(context.Background(), kc, realm, id, secret); err != nil {
		t.Fatal(err)
	}
	return id
}

func credential(ns, name, server, clientID string, targets ...string) *secretsv1beta1.KeycloakClientCredential {
	return &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: server}, Realm: realm, ClientID: clientID},
			Target: secretsv1beta1.TargetSpec{
				SecretName: name + "-creds",
				Namespaces: targets,
				Keys:       secretsv1beta1.SecretKeys{ClientID: "key", ClientSecret: "secret"},
			},
			RefreshInterval: &metav1.Duration{Duration: 30 * time.Second},
		},
	}
}

// consenting is the annotation of a namespace that accepts Secrets from source.
func consenting(source string) map[string]string {
	return map[string]string{tenancy.AllowedSourceNamespacesAnnotation: source}
}

func secretOf(t testing.TB, ns, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := op.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatalf("read Secret %s/%s: %v", ns, name, err)
	}
	return &s
}
