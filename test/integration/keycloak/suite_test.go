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
	"math/rand/v2"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	// operatorNamespace holds the KeycloakServers' credentials Secrets.
	operatorNamespace = "vko-system"
	// operatorClient is the operator's client in master, with exactly the
	// realm-management roles docs/admin-setup.md grants, in each realm a
	// test's KeycloakServer grants (never master's admin role).
	operatorClient = "vko-suite-operator"
	testMaxBackoff = 2 * time.Second
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
	if op, err = harness.StartOperator(manager.Options{OperatorNamespace: operatorNamespace, MaxBackoff: testMaxBackoff,
		MaxConcurrentReconciles: 8, // as deployed (--max-concurrent-reconciles)
	}); err != nil {
		fmt.Fprintln(os.Stderr, "start operator:", err)
		return 1
	}
	defer op.Stop()

	if err := op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
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

func createRealm(ctx context.Context, k *harness.Keycloak, name string) error {
	a, err := k.Admin(ctx)
	if err != nil {
		return err
	}
	return a.CreateRealm(ctx, name)
}

// createClient creates a client as the admin does; one whose secret
// Keycloak generates is made a client in use for a while (its secret issued
// an hour ago), so that a rotation may follow at once.
func createClient(ctx context.Context, k *harness.Keycloak, realm, clientID, secret string) error {
	a, err := k.Admin(ctx)
	if err != nil {
		return err
	}
	if err := a.CreateClient(ctx, realm, clientID, secret); err != nil || secret != "" {
		return err
	}
	return a.AgeSecret(ctx, realm, clientID, time.Hour)
}

// clientSecretOf reads a client's secret as the admin, to compare with what
// the operator wrote.
func clientSecretOf(ctx context.Context, k *harness.Keycloak, realm, clientID string) (string, error) {
	a, err := k.Admin(ctx)
	if err != nil {
		return "", err
	}
	return a.ClientSecret(ctx, realm, clientID)
}

// regenerate makes Keycloak issue a new secret, as an admin does after an incident.
func regenerate(ctx context.Context, k *harness.Keycloak, realm, clientID string) error {
	a, err := k.Admin(ctx)
	if err != nil {
		return err
	}
	return a.RegenerateSecret(ctx, realm, clientID)
}
