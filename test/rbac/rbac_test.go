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

// Package rbac proves that the permissions the bundle's CSV declares are
// enough for the operator's flows: the manager runs as the CSV's
// ServiceAccount (impersonated) with exactly those rules, as OLM grants them.
package rbac

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	operatorNamespace = "vko-system"
	rbacRealm         = "rbac"
)

// csvStrategy reads the install strategy of the bundle's CSV.
func csvStrategy(t *testing.T) v1alpha1.StrategyDetailsDeployment {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(harness.RepoRoot(), "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	return b.CSV.Spec.InstallStrategy.StrategySpec
}

// startAsServiceAccount starts the operator acting as the CSV's
// ServiceAccount, granted exactly the strategy's permissions; each tweak
// may change the configuration first.
func startAsServiceAccount(t *testing.T, strategy v1alpha1.StrategyDetailsDeployment, tweaks ...func(*harness.Config)) *harness.Operator {
	t.Helper()
	v, err := harness.VaultFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	k, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	sa := strategy.ClusterPermissions[0].ServiceAccountName
	vaultCfg := vaultclient.ConfigFromEnv()
	vaultCfg.Address, vaultCfg.Token = v.Addr, v.Token
	identity := serviceAccountIdentity(sa)
	config := harness.Config{
		// MigrateOnStart: the migrator runs as the ServiceAccount too. On
		// a fresh cluster it only reads the three CRDs (get by name): the
		// status update it would need after an upgrade is not exercised.
		Options:       manager.Options{Vault: vaultCfg, OperatorNamespace: operatorNamespace, MaxBackoff: 2 * time.Second, MigrateOnStart: true},
		Identity:      &identity,
		BeforeManager: func(c client.Client) error { return grant(c, sa, strategy, k) },
	}
	for _, tweak := range tweaks {
		tweak(&config)
	}
	op, err := harness.Start(config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Stop)
	return op
}

// serviceAccountIdentity is who a pod running as the ServiceAccount sa of
// the operator's namespace is to the API server.
func serviceAccountIdentity(sa string) rest.ImpersonationConfig {
	return rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + operatorNamespace + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNamespace, "system:authenticated"},
	}
}

// grant creates what OLM creates from the CSV — the ServiceAccount, a Role
// and RoleBinding per permissions entry, a ClusterRole and ClusterRoleBinding
// per clusterPermissions entry — and the admin's part: the operator
// namespace with the credentials of the operator's Keycloak client, which
// holds the documented realm-management roles in the test's realm only.
func grant(c client.Client, sa string, s v1alpha1.StrategyDetailsDeployment, k *harness.Keycloak) error {
	ctx := context.Background()
	a, err := k.Admin(ctx)
	if err != nil {
		return err
	}
	if err := a.CreateRealm(ctx, rbacRealm); err != nil {
		return err
	}
	secret, err := a.CreateOperatorClient(ctx, "vko-rbac-operator", rbacRealm)
	if err != nil {
		return err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: operatorNamespace}}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: operatorNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keycloak-credentials", Namespace: operatorNamespace},
			StringData: map[string]string{"clientId": "vko-rbac-operator", "clientSecret": secret}},
	}
	for i, p := range s.Permissions {
		name := fmt.Sprintf("csv-permissions-%d", i)
		objs = append(objs,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNamespace}, Rules: p.Rules},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNamespace}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}})
	}
	for i, p := range s.ClusterPermissions {
		name := fmt.Sprintf("csv-cluster-permissions-%d", i)
		objs = append(objs,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: p.Rules},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}})
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// flows runs the VaultApp and KeycloakClientCredential flows and returns
// their Ready conditions once both are Ready, or when the bound passes.
func flows(t *testing.T, op *harness.Operator, within time.Duration) (vault, keycloak metav1.Condition, kcc *secretsv1beta1.KeycloakClientCredential) {
	t.Helper()
	ctx := context.Background()
	prepareServices(t, op)
	k, _ := harness.KeycloakFromEnv()
	ns := op.NewNamespace(t, nil)

	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-api", Namespace: ns},
		Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{
			{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}},
		}}},
	}
	server := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "kc-" + ns},
		Spec: secretsv1beta1.KeycloakServerSpec{URL: k.URL, AuthType: secretsv1beta1.AuthClientCredentials,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-credentials"},
			Access:               []secretsv1beta1.AccessGrant{{Namespaces: []string{ns}, Realms: []string{rbacRealm}, ClientIDs: []string{"app"}}}},
	}
	kcc = &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: server.Name}, Realm: rbacRealm, ClientID: "app"},
			Target: secretsv1beta1.TargetSpec{SecretName: "app-creds"},
		},
	}
	for _, o := range []client.Object{app, server, kcc} {
		if err := op.Client.Create(ctx, o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
	ready := func(conds []metav1.Condition) metav1.Condition {
		for _, c := range conds {
			if c.Type == vaultv1beta1.TypeReady { // the same type in both groups
				return c
			}
		}
		return metav1.Condition{Status: metav1.ConditionUnknown, Reason: "NotReconciled"}
	}
	deadline := time.Now().Add(within)
	for {
		_ = op.Client.Get(ctx, client.ObjectKeyFromObject(app), app)
		_ = op.Client.Get(ctx, client.ObjectKeyFromObject(kcc), kcc)
		vault, keycloak = ready(app.Status.Conditions), ready(kcc.Status.Conditions)
		if (vault.Status == metav1.ConditionTrue && keycloak.Status == metav1.ConditionTrue) || time.Now().After(deadline) {
			return vault, keycloak, kcc
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// prepareServices does the Vault and Keycloak administrators' part: a
// Kubernetes auth method for the roles, a realm and a client.
func prepareServices(t *testing.T, op *harness.Operator) {
	t.Helper()
	ctx := context.Background()
	v, _ := harness.VaultFromEnv()
	if err := v.ConfigureKubernetesAuth(ctx, op.Client, op.Config); err != nil {
		t.Fatal(err)
	}
	k, _ := harness.KeycloakFromEnv()
	a, err := k.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateRealm(ctx, rbacRealm); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateClient(ctx, rbacRealm, "app", ""); err != nil {
		t.Fatal(err)
	}
}

func TestCSVPermissionsAreEnoughForBothFlows(t *testing.T) {
	// The counters are the process's: other tests here fail migrations on purpose.
	ran := func(crd string) float64 {
		return migration.RunCount(crd, "up_to_date") + migration.RunCount(crd, "migrated")
	}
	failedBefore, ranBefore := map[string]float64{}, map[string]float64{}
	for _, crd := range manager.OwnedCRDs {
		failedBefore[crd], ranBefore[crd] = migration.RunCount(crd, "failed"), ran(crd)
	}
	op := startAsServiceAccount(t, csvStrategy(t))
	vault, keycloak, kcc := flows(t, op, 60*time.Second)
	NewWithT(t).Expect(vault.Status).To(Equal(metav1.ConditionTrue), "VaultApp: %s %s", vault.Reason, vault.Message)
	NewWithT(t).Expect(keycloak.Status).To(Equal(metav1.ConditionTrue), "KeycloakClientCredential: %s %s", keycloak.Reason, keycloak.Message)
	// A target Secret edited by hand is patched back, and deleted with the
	// credential: the CSV's verbs on Secrets cover both.
	ctx := context.Background()
	key := client.ObjectKey{Namespace: kcc.Namespace, Name: kcc.Spec.Target.SecretName}
	var target corev1.Secret
	NewWithT(t).Expect(op.Client.Get(ctx, key, &target)).To(Succeed())
	for k := range target.Data {
		target.Data[k] = []byte("edited by hand")
	}
	NewWithT(t).Expect(op.Client.Update(ctx, &target)).To(Succeed())
	NewWithT(t).Eventually(func() []string {
		var now corev1.Secret
		_ = op.Client.Get(ctx, key, &now)
		var edited []string
		for k, v := range now.Data {
			if string(v) == "edited by hand" {
				edited = append(edited, k)
			}
		}
		return edited
	}).WithTimeout(30*time.Second).Should(BeEmpty(), "the edited target Secret was not restored")
	NewWithT(t).Expect(op.Client.Delete(ctx, kcc)).To(Succeed())
	NewWithT(t).Eventually(func() bool { return apierrors.IsNotFound(op.Client.Get(ctx, key, &corev1.Secret{})) }).
		WithTimeout(30*time.Second).Should(BeTrue(), "the target Secret was not deleted with its credential")
	// The migrator ran as the ServiceAccount too, and could read every CRD.
	for _, crd := range manager.OwnedCRDs {
		NewWithT(t).Eventually(func() float64 { return ran(crd) }).WithTimeout(30*time.Second).Should(BeNumerically(">", ranBefore[crd]), "migration of %s", crd)
		NewWithT(t).Expect(migration.RunCount(crd, "failed")).To(Equal(failedBefore[crd]), "migration of %s failed as the ServiceAccount", crd)
	}
}

// TestWithoutCreatingSecretsTheKeycloakFlowFails shows the test has teeth:
// the same flows, with the one verb that writes new Secrets taken away.
func TestWithoutCreatingSecretsTheKeycloakFlowFails(t *testing.T) {
	strategy := csvStrategy(t)
	removed := false
	for i, rule := range strategy.ClusterPermissions[0].Rules {
		if slices.Contains(rule.Resources, "secrets") && slices.Contains(rule.Verbs, "create") {
			strategy.ClusterPermissions[0].Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "create" })
			removed = true
		}
	}
	if !removed {
		t.Fatal("the CSV grants no create on secrets: nothing to remove")
	}
	op := startAsServiceAccount(t, strategy)
	vault, keycloak, _ := flows(t, op, 20*time.Second)
	NewWithT(t).Expect(vault.Status).To(Equal(metav1.ConditionTrue), "VaultApp needs no Secret: %s", vault.Message)
	NewWithT(t).Expect(keycloak.Status).To(Equal(metav1.ConditionFalse))
	NewWithT(t).Expect(keycloak.Reason).To(Equal(secretsv1beta1.ReasonTargetFailed))
	if !strings.Contains(keycloak.Message, "forbidden") {
		t.Errorf("Ready message = %q, want the API server's refusal", keycloak.Message)
	}
}
