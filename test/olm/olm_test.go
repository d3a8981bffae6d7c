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

// Package olm installs the operator the way its users do: OLM resolves a
// Subscription against our own catalog, and installs the bundle's CSV on a
// local cluster with no container runtime (kwok runs the pods).
package olm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

const (
	installNamespace = "operators"
	packageName      = "vault-keycloak-operator"
)

// The committed bundle (at VERSION) is what the Subscription installs
// first; the upgrades go to the two minor versions after it.
var (
	firstVersion = harness.Version()
	firstCSV     = packageName + ".v" + firstVersion.String()
)

// TestMain runs the tests in a network namespace of their own, so that
// routing the fake pod network needs no root (see harness.RunInOwnNetwork);
// the run's Keycloak is forwarded in.
func TestMain(m *testing.M) {
	if !harness.InOwnNetwork() {
		os.Exit(harness.RunInOwnNetwork(os.Getenv(harness.EnvKeycloakURL)))
	}
	if err := harness.SetUpOwnNetwork(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestSubscriptionInstallsRunsAndUpgradesTheOperator is the whole path a
// cluster admin takes: subscribe from our catalog, see OLM create what the
// CSV declares, run the operator as the ServiceAccount OLM made against a
// real Vault and Keycloak, then upgrade to a bundle that replaces the first,
// then to one that retires v1alpha1. Each step needs the one before it.
func TestSubscriptionInstallsRunsAndUpgradesTheOperator(t *testing.T) {
	e := newEnv(t)
	var csv *operatorsv1alpha1.ClusterServiceVersion
	if !t.Run("Subscription installs the bundle", func(t *testing.T) { csv = e.install(t) }) {
		return
	}
	if !t.Run("manager runs as the ServiceAccount OLM made", func(t *testing.T) { e.runFirstManager(t, csv) }) {
		return
	}
	if !t.Run("upgrade keeps every object", e.upgrade) {
		return
	}
	t.Run("retiring v1alpha1 is refused unmigrated, then keeps every object", e.retire)
	t.Run("no secret value in the manager's log", e.checkLogs)
}

// env is what the steps share: the cluster, a client of the admin, the
// real Vault (this test's own: it points Vault's Kubernetes auth at this
// cluster) and the run's Keycloak.
type env struct {
	cluster  *harness.OLMCluster
	c        client.Client
	vault    *harness.Vault
	keycloak *harness.Keycloak
	dir      string
	manager  *harness.Process
	// managers are every manager run, for the log check; secrets are the
	// values none of their logs may hold.
	managers []*harness.Process
	secrets  []string
	// refused are managers that stopped at their start, by design.
	refused []*harness.Process
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{dir: t.TempDir()}
	// client-go's warnings (v1alpha1 is deprecated) go to the test's output.
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	keycloak, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	e.keycloak = keycloak
	if e.vault, err = harness.StartVault(ctx, e.dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.vault.Stop)
	if e.cluster, err = harness.StartOLMCluster(ctx, e.dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.cluster.Stop)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, operatorsv1alpha1.AddToScheme, operatorsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	if e.c, err = client.New(e.cluster.Config, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	if err := harness.AddKwokNode(ctx, e.c); err != nil {
		t.Fatal(err)
	}
	return e
}

// install subscribes to the committed catalog and checks what OLM made.
func (e *env) install(t *testing.T) *operatorsv1alpha1.ClusterServiceVersion {
	ctx := context.Background()
	c := e.c
	// No config: the operator needs no environment; a VaultServer says
	// where Vault is.
	e.subscribe(t, filepath.Join(harness.RepoRoot(), "local-catalog"), nil)

	csv := waitCSV(t, c, e.cluster, firstCSV, 3*time.Minute)
	t.Logf("CSV %s: %s", csv.Name, csv.Status.Phase)
	waitPlanComplete(t, c, firstCSV)

	// What OLM created from the CSV.
	dep := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Name
	checkConversion(t, c, dep+"-service")
	var vwcs admissionregistrationv1.ValidatingWebhookConfigurationList
	var mwcs admissionregistrationv1.MutatingWebhookConfigurationList
	if err := c.List(ctx, &vwcs); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &mwcs); err != nil {
		t.Fatal(err)
	}
	if len(vwcs.Items) != 4 || len(mwcs.Items) != 3 {
		t.Errorf("%d validating and %d mutating webhook configurations, want 4 (VaultServer has no defaulting) and 3", len(vwcs.Items), len(mwcs.Items))
	}
	checkGrants(t, c, csv)
	for _, obj := range []client.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: dep + "-service", Namespace: installNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: dep + "-service-cert", Namespace: installNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: csv.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].ServiceAccountName, Namespace: installNamespace}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s: %v", obj, obj.GetName(), err)
		}
	}
	return csv
}

// subscribe serves catalog behind our CatalogSource and subscribes to the
// package in installNamespace (its OperatorGroup: AllNamespaces), each
// release approved as it comes, with config on the Subscription.
func (e *env) subscribe(t *testing.T, catalog string, config *operatorsv1alpha1.SubscriptionConfig) {
	t.Helper()
	ctx := context.Background()
	addr, err := e.cluster.ServeCatalog(ctx, catalog)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&operatorsv1alpha1.CatalogSource{
			ObjectMeta: metav1.ObjectMeta{Name: packageName, Namespace: harness.OLMNamespace},
			Spec:       operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: addr, DisplayName: "ours"},
		},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: installNamespace}},
		&operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: installNamespace}},
		&operatorsv1alpha1.Subscription{
			ObjectMeta: metav1.ObjectMeta{Name: packageName, Namespace: installNamespace},
			Spec: &operatorsv1alpha1.SubscriptionSpec{
				CatalogSource: packageName, CatalogSourceNamespace: harness.OLMNamespace,
				Package: packageName, Channel: "stable", InstallPlanApproval: operatorsv1alpha1.ApprovalAutomatic,
				Config: config,
			},
		},
	} {
		if err := e.c.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
}

// checkConversion waits for the CRDs' conversion to point at OLM's own
// webhook Service (service, in the install namespace) with OLM's CA. OLM
// sets it asynchronously after the CSV succeeds, and during an upgrade its
// catalog operator re-applies the bundle's CRDs (with the bundle's own
// Service name and no CA) until the InstallPlan completes, so call it once
// the plan is Complete.
func checkConversion(t *testing.T, c client.Client, service string) {
	t.Helper()
	for _, name := range manager.OwnedCRDs {
		var conv *apiextensionsv1.CustomResourceConversion
		deadline := time.Now().Add(time.Minute)
		for {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &crd); err != nil {
				t.Fatalf("CRD %s: %v", name, err)
			}
			conv = crd.Spec.Conversion
			if conv != nil && conv.Strategy == apiextensionsv1.WebhookConverter && conv.Webhook != nil && conv.Webhook.ClientConfig.Service != nil &&
				conv.Webhook.ClientConfig.Service.Namespace == installNamespace && conv.Webhook.ClientConfig.Service.Name == service &&
				len(conv.Webhook.ClientConfig.CABundle) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("CRD %s: conversion %+v, want Webhook through Service %s/%s with OLM's caBundle", name, conv, installNamespace, service)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// waitPlanComplete waits for the InstallPlan that installs the CSV to be
// Complete: OLM's catalog operator writes nothing more for it after that.
func waitPlanComplete(t *testing.T, c client.Client, csvName string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var plans operatorsv1alpha1.InstallPlanList
		if err := c.List(context.Background(), &plans, client.InNamespace(installNamespace)); err != nil {
			t.Fatal(err)
		}
		var phases []operatorsv1alpha1.InstallPlanPhase
		for _, p := range plans.Items {
			if slices.Contains(p.Spec.ClusterServiceVersionNames, csvName) {
				if p.Status.Phase == operatorsv1alpha1.InstallPlanPhaseComplete {
					return
				}
				phases = append(phases, p.Status.Phase)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Complete InstallPlan for %s; phases %v", csvName, phases)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkGrants compares what OLM bound to the ServiceAccount with the CSV's
// permissions and clusterPermissions: exactly those rules, nothing more.
func checkGrants(t *testing.T, c client.Client, csv *operatorsv1alpha1.ClusterServiceVersion) {
	t.Helper()
	ctx := context.Background()
	strategy := csv.Spec.InstallStrategy.StrategySpec
	sa := strategy.ClusterPermissions[0].ServiceAccountName
	bound := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == installNamespace
		})
	}
	var crbs rbacv1.ClusterRoleBindingList
	var rbs rbacv1.RoleBindingList
	if err := c.List(ctx, &crbs); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &rbs, client.InNamespace(installNamespace)); err != nil {
		t.Fatal(err)
	}
	var clusterRules, rules []rbacv1.PolicyRule
	for _, b := range crbs.Items {
		if bound(b.Subjects) {
			var cr rbacv1.ClusterRole
			if err := c.Get(ctx, client.ObjectKey{Name: b.RoleRef.Name}, &cr); err != nil {
				t.Fatal(err)
			}
			clusterRules = append(clusterRules, cr.Rules...)
		}
	}
	for _, b := range rbs.Items {
		if bound(b.Subjects) {
			var r rbacv1.Role
			if err := c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: b.RoleRef.Name}, &r); err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r.Rules...)
		}
	}
	var declared []rbacv1.PolicyRule
	for _, p := range append(slices.Clone(strategy.Permissions), strategy.ClusterPermissions...) {
		declared = append(declared, p.Rules...)
	}
	// What OLM adds on its own for a webhook-serving operator: reading the
	// certificate it made, and system:auth-delegator (token and access
	// reviews). In AllNamespaces mode it also grants the namespaced
	// permissions cluster-wide.
	dep := strategy.DeploymentSpecs[0].Name
	olmAdds := []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{dep + "-service-cert"}},
		{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}},
		{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}},
	}
	has := func(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
		return slices.ContainsFunc(rules, func(o rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(o, r) })
	}
	granted := append(slices.Clone(clusterRules), rules...)
	for _, r := range declared {
		if !has(granted, r) {
			t.Errorf("the CSV declares %+v, but OLM did not grant it to %s", r, sa)
		}
	}
	for _, r := range granted {
		if !has(declared, r) && !has(olmAdds, r) {
			t.Errorf("%s was granted %+v, which neither the CSV nor OLM's webhook support asks for", sa, r)
		}
	}
}

// waitCSV waits for the CSV to succeed, and prints OLM's view when it does not.
func waitCSV(t *testing.T, c client.Client, cluster *harness.OLMCluster, name string, timeout time.Duration) *operatorsv1alpha1.ClusterServiceVersion {
	t.Helper()
	ctx := context.Background()
	csv := &operatorsv1alpha1.ClusterServiceVersion{}
	deadline := time.Now().Add(timeout)
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: name}, csv)
		if err == nil && csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded {
			return csv
		}
		if time.Now().After(deadline) {
			var subs operatorsv1alpha1.SubscriptionList
			var plans operatorsv1alpha1.InstallPlanList
			_ = c.List(ctx, &subs, client.InNamespace(installNamespace))
			_ = c.List(ctx, &plans, client.InNamespace(installNamespace))
			msg := fmt.Sprintf("CSV %s: %v phase %q reason %q message %q\n", name, err, csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
			for _, r := range csv.Status.RequirementStatus {
				if r.Status != operatorsv1alpha1.RequirementStatusReasonPresent {
					msg += fmt.Sprintf("  requirement %s %s %s: %s %s\n", r.Group, r.Kind, r.Name, r.Status, r.Message)
					for _, d := range r.Dependents {
						msg += fmt.Sprintf("    dependent %s %s: %s\n", d.Kind, d.Message, d.Status)
					}
				}
			}
			for _, s := range subs.Items {
				msg += fmt.Sprintf("Subscription %s: state %q conditions %+v\n", s.Name, s.Status.State, s.Status.Conditions)
			}
			for _, p := range plans.Items {
				msg += fmt.Sprintf("InstallPlan %s: phase %q conditions %+v\n", p.Name, p.Status.Phase, p.Status.Conditions)
				for _, step := range p.Status.Plan {
					msg += fmt.Sprintf("  step %s %s/%s: %s\n", step.Resource.Kind, step.Resource.Group, step.Resource.Name, step.Status)
				}
			}
			t.Fatalf("%s\n%s", msg, cluster.Logs(15))
		}
		time.Sleep(time.Second)
	}
}
