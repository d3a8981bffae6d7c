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

package secrets_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/carbogame/vault-keycloak-operator/internal/operator"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	// operatorNamespace holds the KeycloakServers' credentials Secrets.
	operatorNamespace = "vko-system"
	// adminCredentials is the Secret with the bootstrap admin's login.
	adminCredentials = "keycloak-admin"
	testMaxBackoff   = 2 * time.Second
)

var (
	op *harness.Operator
	// kc is the Keycloak that make test started for the whole run.
	kc *harness.Keycloak
	// realm is this suite's realm in it, created through gocloak.
	realm string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if kc, err = harness.KeycloakFromEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if op, err = harness.StartOperator(operator.Options{OperatorNamespace: operatorNamespace, MaxBackoff: testMaxBackoff}); err != nil {
		fmt.Fprintln(os.Stderr, "start operator:", err)
		return 1
	}
	defer op.Stop()

	if err := op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := op.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: adminCredentials, Namespace: operatorNamespace},
		StringData: map[string]string{"username": kc.User, "password": kc.Password},
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	realm = fmt.Sprintf("operator-%04d", rand.IntN(10000))
	if err := createRealm(ctx, kc, realm); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// keycloakAdmin logs in to a Keycloak as its bootstrap admin: the test
// stands for the Keycloak administrator.
func keycloakAdmin(ctx context.Context, k *harness.Keycloak) (*gocloak.GoCloak, string, error) {
	gc := gocloak.NewClient(k.URL)
	token, err := gc.LoginAdmin(ctx, k.User, k.Password, "master")
	if err != nil {
		return nil, "", fmt.Errorf("log in to Keycloak as admin: %w", err)
	}
	return gc, token.AccessToken, nil
}

func createRealm(ctx context.Context, k *harness.Keycloak, name string) error {
	gc, token, err := keycloakAdmin(ctx, k)
	if err != nil {
		return err
	}
	if _, err := gc.CreateRealm(ctx, token, gocloak.RealmRepresentation{Realm: &name, Enabled: gocloak.BoolP(true)}); err != nil {
		return fmt.Errorf("create realm %s: %w", name, err)
	}
	return nil
}

// createClient creates a confidential client with a service account (so
// that it can request tokens with client credentials). A secret, when given,
// is set as the client's secret.
func createClient(ctx context.Context, k *harness.Keycloak, realm, clientID, secret string) error {
	gc, token, err := keycloakAdmin(ctx, k)
	if err != nil {
		return err
	}
	c := gocloak.Client{
		ClientID:               &clientID,
		Enabled:                gocloak.BoolP(true),
		PublicClient:           gocloak.BoolP(false),
		ServiceAccountsEnabled: gocloak.BoolP(true),
		StandardFlowEnabled:    gocloak.BoolP(false),
	}
	if secret != "" {
		c.Secret = &secret
	}
	if _, err := gc.CreateClient(ctx, token, realm, c); err != nil {
		return fmt.Errorf("create client %s: %w", clientID, err)
	}
	return nil
}

// clientSecretOf reads a client's secret as the admin, to compare with
// what the operator wrote.
func clientSecretOf(ctx context.Context, k *harness.Keycloak, realm, clientID string) (string, error) {
	gc, token, err := keycloakAdmin(ctx, k)
	if err != nil {
		return "", err
	}
	clients, err := gc.GetClients(ctx, token, realm, gocloak.GetClientsParams{ClientID: &clientID})
	if err != nil || len(clients) != 1 {
		return "", fmt.Errorf("find client %s: %v (%d found)", clientID, err, len(clients))
	}
	cred, err := gc.GetClientSecret(ctx, token, realm, *clients[0].ID)
	if err != nil {
		return "", err
	}
	return gocloak.PString(cred.Value), nil
}

// regenerate makes Keycloak issue a new secret, as an admin does after an incident.
func regenerate(ctx context.Context, k *harness.Keycloak, realm, clientID string) error {
	gc, token, err := keycloakAdmin(ctx, k)
	if err != nil {
		return err
	}
	clients, err := gc.GetClients(ctx, token, realm, gocloak.GetClientsParams{ClientID: &clientID})
	if err != nil || len(clients) != 1 {
		return fmt.Errorf("find client %s: %v", clientID, err)
	}
	_, err = gc.RegenerateClientSecret(ctx, token, realm, *clients[0].ID)
	return err
}
