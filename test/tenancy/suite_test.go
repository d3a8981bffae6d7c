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

// Package tenancy acts as a tenant — a user with edit rights in one
// namespace, impersonated against the real API server — and tries every way
// it can think of to make the operator act beyond what the cluster admin
// granted. Each attempt must be refused with the exact message, or be
// inert; the tests check Vault's and Keycloak's state and the Secrets, not
// just the API's answer.
package tenancy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	operatorNamespace = "vko-system"
	// tenantUser is the impersonated tenant: edit rights in its own
	// namespaces, nothing cluster-wide.
	tenantUser = "alice"
	// bypassLabel on a namespace makes the API server skip the validating
	// webhooks there: the webhook is down, or was bypassed (failurePolicy
	// Ignore, objects that predate it). The controller must still refuse.
	bypassLabel = "tenancy-test/skip-validating-webhooks"
	// operatorClientID is the client the operator logs in to Keycloak with.
	operatorClientID = "vko-tenancy-operator"
	// sweepInterval is short so that an orphan is found within the test.
	sweepInterval = 2 * time.Second
)

var (
	op    *harness.Operator
	kc    *harness.Keycloak
	vault *harness.Vault
	// vaultAdmin stands for the Vault administrator, and for the checks.
	vaultAdmin *vaultapi.Client
	// tenant is the API client of tenantUser.
	tenant client.Client
	// appsRealm holds the clients the grants name.
	appsRealm string
	// server is the KeycloakServer, whose grants the tests read from.
	server string
	// operatorTokenPath is where the operator reads its ServiceAccount's
	// token, for a VaultServer's Kubernetes login (audience_test.go).
	operatorTokenPath string
	// own, victim and bypass are namespaces: own and bypass are the
	// tenant's (bypass skips the validating webhooks), victim is another
	// team's.
	own, victim, bypass string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		return 1
	}
	var err error
	if kc, err = harness.KeycloakFromEnv(); err != nil {
		return fail("Keycloak", err)
	}
	logDir, err := os.MkdirTemp("", "vko-tenancy-")
	if err != nil {
		return fail("log dir", err)
	}
	if vault, err = harness.StartVault(ctx, logDir); err != nil {
		return fail("start Vault", err)
	}
	defer vault.Stop()
	if vaultAdmin, err = vault.AdminClient(); err != nil {
		return fail("Vault admin", err)
	}
	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token = vault.Addr, vault.Token
	operatorTokenPath = filepath.Join(logDir, "operator-token")
	cfg.ServiceAccountTokenPath = operatorTokenPath
	if op, err = harness.StartOperator(manager.Options{
		Vault: cfg, OperatorNamespace: operatorNamespace, MaxBackoff: 2 * time.Second, OrphanSweepInterval: sweepInterval,
		// Slower than shipped, so that a tenant's burst outpaces the
		// Events' pace even on a busy machine (events_test.go).
		EventPace:               eventPace,
		MaxConcurrentReconciles: 8, // as deployed (--max-concurrent-reconciles)
	}); err != nil {
		return fail("start operator", err)
	}
	defer op.Stop()
	if err := vault.ConfigureKubernetesAuth(ctx, op.Client, op.Config); err != nil {
		return fail("Vault Kubernetes auth", err)
	}
	if err := setUp(ctx); err != nil {
		return fail("set up", err)
	}
	return m.Run()
}

// tenantConfig is the tenant's rest config: the API server's admin,
// impersonating tenantUser.
func tenantConfig() *rest.Config {
	cfg := rest.CopyConfig(op.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: tenantUser, Groups: []string{"system:authenticated"}}
	return cfg
}

// setUp is what the cluster admin and the Keycloak admin do once: the
// namespaces and the tenant's rights in them, the operator's Keycloak
// login, a realm with two teams' clients, and a KeycloakServer that grants
// the tenant its own team's clients.
func setUp(ctx context.Context) error {
	suffix := fmt.Sprintf("%04d", rand.IntN(10000))
	own, victim, bypass = "team-a-"+suffix, "team-b-"+suffix, "team-a-bypass-"+suffix
	appsRealm = "apps-" + suffix
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		{ObjectMeta: metav1.ObjectMeta{Name: own}},
		{ObjectMeta: metav1.ObjectMeta{Name: victim}},
		{ObjectMeta: metav1.ObjectMeta{Name: bypass, Labels: map[string]string{bypassLabel: "true"}}},
	} {
		if err := op.Client.Create(ctx, ns); err != nil {
			return err
		}
	}
	editors, err := installEditorRoles(ctx)
	if err != nil {
		return err
	}
	if err := grantTenant(ctx, own, editors); err != nil {
		return err
	}
	if err := grantTenant(ctx, bypass, editors); err != nil {
		return err
	}
	if err := skipValidatingWebhooksIn(ctx); err != nil {
		return err
	}
	if tenant, err = client.New(tenantConfig(), client.Options{Scheme: manager.NewScheme()}); err != nil {
		return err
	}

	admin, err := kc.Admin(ctx)
	if err != nil {
		return err
	}
	if err := admin.CreateRealm(ctx, appsRealm); err != nil {
		return err
	}
	for _, c := range []string{"team-a-web", "team-a-rot", "team-a-narrow", "team-b-web"} {
		if err := admin.CreateClient(ctx, appsRealm, c, ""); err != nil {
			return err
		}
		// In use for a while: a rotation may follow at once.
		if err := admin.AgeSecret(ctx, appsRealm, c, time.Hour); err != nil {
			return err
		}
	}
	// The rights the admin setup gives, in the apps realm alone: the
	// server's grant of realm master below reaches nothing in Keycloak.
	secret, err := admin.CreateOperatorClient(ctx, operatorClientID, appsRealm)
	if err != nil {
		return err
	}
	if err := op.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "keycloak-login", Namespace: operatorNamespace},
		StringData: map[string]string{"clientId": operatorClientID, "clientSecret": secret},
	}); err != nil {
		return err
	}
	server = "kc-" + suffix
	return op.Client.Create(ctx, &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: server},
		Spec: secretsv1beta1.KeycloakServerSpec{
			URL: kc.URL, CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-login"},
			AuthType: secretsv1beta1.AuthClientCredentials,
			Access: []secretsv1beta1.AccessGrant{
				{Namespaces: []string{own, bypass}, Realms: []string{appsRealm}, ClientIDs: []string{"team-a-web", "team-a-rot"}},
				// The grant TestAdminNarrowsAGrant takes back.
				{Namespaces: []string{own}, Realms: []string{appsRealm}, ClientIDs: []string{"team-a-narrow"}},
				{Namespaces: []string{own}, Realms: []string{appsRealm}, ClientIDs: []string{"team-a-rot"}, Rotate: true},
				// Even an admin who grants all of master does not expose
				// the operator's login or Keycloak's admin clients.
				{Namespaces: []string{own, bypass}, Realms: []string{"master"}, ClientIDs: []string{"*"}, Rotate: true},
				{Namespaces: []string{victim}, Realms: []string{appsRealm}, ClientIDs: []string{"team-b-*"}},
			},
		},
	})
}

// editorRoles are the ClusterRoles the project ships for app teams (what a
// cluster admin binds): create and edit the operator's kinds, read their
// status, never write it.
var editorRoles = []string{"vault_vaultapp_editor_role.yaml", "secrets_keycloakclientcredential_editor_role.yaml"}

// installEditorRoles creates the shipped editor ClusterRoles, as in config/rbac.
func installEditorRoles(ctx context.Context) ([]string, error) {
	var names []string
	for _, file := range editorRoles {
		raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "config", "rbac", file))
		if err != nil {
			return nil, err
		}
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal(raw, &role); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if err := op.Client.Create(ctx, &role); err != nil {
			return nil, err
		}
		names = append(names, role.Name)
	}
	return names, nil
}

// grantTenant gives the tenant what an app team gets in its namespace: the
// shipped editor roles for the operator's kinds, and Secrets, ConfigMaps
// and ServiceAccounts as Kubernetes' edit role gives them.
func grantTenant(ctx context.Context, ns string, editors []string) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps", "serviceaccounts"}, Verbs: []string{"*"}},
			// As the edit role: her workloads' tokens, for any audience.
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if err := op.Client.Create(ctx, role); err != nil {
		return err
	}
	subjects := []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: tenantUser}}
	bindings := []*rbacv1.RoleBinding{{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tenant"},
		Subjects:   subjects,
	}}
	for _, name := range editors {
		bindings = append(bindings, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects:   subjects,
		})
	}
	for _, b := range bindings {
		if err := op.Client.Create(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// skipValidatingWebhooksIn makes the API server skip the validating
// webhooks in namespaces with bypassLabel, as if they were down.
func skipValidatingWebhooksIn(ctx context.Context) error {
	var list admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := op.Client.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		cfg := &list.Items[i]
		for j := range cfg.Webhooks {
			cfg.Webhooks[j].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: bypassLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
			}}
		}
		if err := op.Client.Update(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}
