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

package vkoctl

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/carbogame/vault-keycloak-operator/api/ondemand"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// The cluster the tests read: a VaultServer granting shop KV read/list
// and a database path, a KeycloakServer granting shop the gitea client
// with rotation, and nothing to other namespaces.
func cluster(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, vaultv1beta1.AddToScheme, secretsv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	vault := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "central", Annotations: map[string]string{vaultv1beta1.DefaultServerAnnotation: "true"}},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: "https://vault.example.com", Cluster: "east",
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes-east"}}},
			Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, MaxTokenTTL: &metav1.Duration{Duration: 30 * time.Minute}, Paths: []vaultv1beta1.VaultPathGrant{
				{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
				{Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}},
			}}},
		},
	}
	keycloak := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "sso"},
		Spec: secretsv1beta1.KeycloakServerSpec{URL: "https://sso.example.com", Access: []secretsv1beta1.AccessGrant{
			{Namespaces: []string{"shop"}, Realms: []string{"apps"}, ClientIDs: []string{"gitea"}, Rotate: true},
		}},
	}
	objs = append(objs, vault, keycloak,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: "shop"}}})
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&vaultv1beta1.VaultApp{}).Build()
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct{ ref, kind, name, err string }{
		{"vaultapp/shop-api", "VaultApp", "shop-api", ""},
		{"vapp/x", "VaultApp", "x", ""},
		{"vaultapps.vault.exemple.com/x", "VaultApp", "x", ""},
		{"kcc/gitea", "KeycloakClientCredential", "gitea", ""},
		{"vsrv/central", "VaultServer", "central", ""},
		{"kcs/sso", "KeycloakServer", "sso", ""},
		{"pod/x", "", "", "not a kind of the operator's"},
		{"vaultapp", "", "", "want KIND/NAME"},
	} {
		kind, name, err := ParseRef(tc.ref)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) || kind.Name != tc.kind || name != tc.name {
			t.Errorf("ParseRef(%q) = %q %q %v; want %q %q %q", tc.ref, kind.Name, name, err, tc.kind, tc.name, tc.err)
		}
	}
}

func TestGrantsListsWhatTheNamespaceMayAsk(t *testing.T) {
	c := cluster(t)
	var out bytes.Buffer
	if err := Grants(context.Background(), c, "shop", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"VaultServer central (the default):", "secret/data/shop/*: read, list", "database/creds/shop: read",
		"deletionPolicy Retain: no; token TTL up to 30m0s", "KeycloakServer sso:", "clients gitea in realms apps, and may rotate them",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("grants shop lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Grants(context.Background(), c, "other", &out); err != nil || !strings.Contains(out.String(), "nothing: no VaultServer or KeycloakServer lists other") {
		t.Errorf("grants other: %v\n%s", err, out.String())
	}
}

const shopAPI = `apiVersion: vault.exemple.com/v1beta1
kind: VaultApp
metadata: {name: shop-api, namespace: shop}
spec:
  policy:
    rules:
    - {path: "db/*", capabilities: [read, list]}
    vaultPaths:
    - {path: database/creds/shop, capabilities: [read]}
`

// Render gives the policy and role the controller writes (Desired), with
// the server's mount, cluster and cap.
func TestRenderVaultApp(t *testing.T) {
	var out bytes.Buffer
	if err := Render(context.Background(), cluster(t), []byte(shopAPI), "ignored", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# VaultApp shop/shop-api on VaultServer central",
		"# Vault ACL policy app.shop.shop-api\n# Managed by vault-keycloak-operator for VaultApp shop/shop-api (uid <uid once created>) in cluster east.",
		"path \"secret/data/shop/db/*\" {\n  capabilities = [\"read\", \"list\"]\n}",
		"path \"secret/metadata/shop/db/*\" {\n  capabilities = [\"read\", \"list\"]\n}",
		"path \"database/creds/shop\" {\n  capabilities = [\"read\"]\n}",
		"# Vault role app.shop.shop-api on auth/kubernetes-east",
		"bound_service_account_names:\n- shop-api", "token_ttl: 30m0s", "token_max_ttl: 30m0s",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "refused") {
		t.Errorf("a VaultApp within the grants: %s", out.String())
	}

	// Asking more than granted: the refusal named, the rest rendered.
	out.Reset()
	greedy := strings.Replace(shopAPI, "[read, list]}", "[read, list, update]}", 1)
	if err := Render(context.Background(), cluster(t), []byte(greedy), "", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `#   spec.policy.rules[0].capabilities: Forbidden: update on "db/*"`) {
		t.Errorf("render of a VaultApp asking update:\n%s", out.String())
	}

	// The v1alpha1 form, converted as the API server converts it.
	out.Reset()
	legacy := "apiVersion: vault.exemple.com/v1alpha1\nkind: VaultApp\nmetadata: {name: legacy, namespace: shop}\nspec: {vaultPolicy: read, secretPaths: [db]}\n"
	if err := Render(context.Background(), cluster(t), []byte(legacy), "", &out); err != nil || !strings.Contains(out.String(), `path "secret/data/shop/db"`) {
		t.Errorf("render of a v1alpha1 VaultApp: %v\n%s", err, out.String())
	}
	if err := Render(context.Background(), cluster(t), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"), "", &out); err == nil || !strings.Contains(err.Error(), "is not a VaultApp or KeycloakClientCredential") {
		t.Errorf("render of a Pod: %v", err)
	}
}

const gitea = `apiVersion: secrets.carbogame.com/v1beta1
kind: KeycloakClientCredential
metadata: {name: gitea, namespace: shop}
spec:
  source: {serverRef: {name: sso}, realm: apps, clientId: gitea}
  target:
    secretName: gitea-oidc
    namespaces: [shop, web, closed]
    keys: {clientId: client_id, clientSecret: client_secret, issuerURL: issuer}
`

// Render gives each consenting target's Secret, with what each key will
// hold and never a value.
func TestRenderCredential(t *testing.T) {
	var out bytes.Buffer
	c := cluster(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "closed"}})
	gitea := strings.Replace(gitea, "[shop, web, closed]", "[shop, web, closed, absent]", 1)
	if err := Render(context.Background(), c, []byte(gitea), "", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Secret shop/gitea-oidc", "# Secret web/gitea-oidc", "# namespace closed does not consent to Secrets from shop",
		"# namespace absent does not exist",
		"client_id: gitea", "client_secret: <the client's secret, read from Keycloak>", "issuer: https://sso.example.com/realms/apps",
		"secrets.carbogame.com/managed-keys: client_id,client_secret,issuer",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "data-hash") || strings.Contains(out.String(), "owner-uid") {
		t.Errorf("render shows a digest or a UID that cannot be known:\n%s", out.String())
	}
}

// Why names the grant that is missing, and the conditions first.
func TestWhy(t *testing.T) {
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-api", Namespace: "elsewhere", Generation: 2, UID: "u1"},
		Spec:       vaultv1beta1.VaultAppSpec{ServerRef: &vaultv1beta1.ServerReference{Name: "central"}},
		Status: vaultv1beta1.VaultAppStatus{Conditions: []metav1.Condition{
			{Type: "PolicySynced", Status: metav1.ConditionFalse, Reason: "NotAllowed", ObservedGeneration: 2},
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotAllowed", Message: "not granted", ObservedGeneration: 1},
		}},
	}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e1", Namespace: "elsewhere"},
		InvolvedObject: corev1.ObjectReference{UID: "u1"}, Type: "Warning", Reason: "NotAllowed", Message: "grant withdrawn",
		LastTimestamp: metav1.NewTime(time.Unix(1000, 0)),
	}
	var out bytes.Buffer
	if err := Why(context.Background(), cluster(t, app, event), "vapp/shop-api", "elsewhere", time.Unix(1060, 0), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"VaultApp elsewhere/shop-api\nConditions:\n  Ready            False   NotAllowed (of an older spec: the operator has not caught up)\n                   not granted\n  PolicySynced",
		"1m0s     Warning NotAllowed               grant withdrawn",
		"missing: VaultServer central lists namespace elsewhere in no entry of its spec.access",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("why lacks %q:\n%s", want, out.String())
		}
	}
}

func TestAskSetsTheRequestAnnotation(t *testing.T) {
	app := &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "shop-api", Namespace: "shop"}}
	c := cluster(t, app)
	var out bytes.Buffer
	if err := Ask(context.Background(), c, Refresh, "vaultapp/shop-api", "shop", "20261202T101010Z", &out); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(app), app); err != nil || app.Annotations[vaultv1beta1.RefreshRequestAnnotation] != "20261202T101010Z" {
		t.Errorf("annotations %v, %v", app.Annotations, err)
	}
	if err := Ask(context.Background(), c, Rotate, "vaultapp/shop-api", "shop", "x1", &out); err == nil || !strings.Contains(err.Error(), "a VaultApp takes no rotate request") {
		t.Errorf("rotate a VaultApp: %v", err)
	}
	if got := RequestID(time.Date(2026, 12, 2, 10, 10, 10, 7e6, time.UTC)); got != "20261202T101010.007Z" || ondemand.Validate(vaultv1beta1.RefreshRequestAnnotation, got) != nil {
		t.Errorf("RequestID = %q", got)
	}
}

// asTenant is c as an app team with the shipped editor role sees it: every
// read of a VaultServer or KeycloakServer is forbidden.
func asTenant(c client.Client) client.Reader {
	forbidden := func(obj runtime.Object) error {
		switch obj.(type) {
		case *vaultv1beta1.VaultServer, *vaultv1beta1.VaultServerList, *secretsv1beta1.KeycloakServer, *secretsv1beta1.KeycloakServerList:
			return apierrors.NewForbidden(schema.GroupResource{Resource: "servers"}, "", errors.New("not the tenant's"))
		}
		return nil
	}
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := forbidden(obj); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := forbidden(list); err != nil {
				return err
			}
			return c.List(ctx, list, opts...)
		},
	})
}

// A tenant who may not read the servers gets why and grants all the same,
// told that the grants are the admin's, shown what the operator found of
// them for its own resources, and shown nothing of the grants themselves.
func TestTenantWithoutServerRightsIsToldWhatItMaySee(t *testing.T) {
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop", UID: "u1"},
		Spec:       vaultv1beta1.VaultAppSpec{ServerRef: &vaultv1beta1.ServerReference{Name: "central"}},
		Status: vaultv1beta1.VaultAppStatus{Server: "central", Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Synced"},
			{Type: "AccessGranted", Status: metav1.ConditionTrue, Reason: "Granted", Message: "the grant covers everything"},
		}, Vault: &vaultv1beta1.VaultAppAccess{Address: "https://vault.example.com", LoginPath: "auth/kubernetes-east/login", Role: "app.shop.api", KVMount: "secret", KVPrefix: "shop/"}},
	}
	tenant := asTenant(cluster(t, app))
	var out bytes.Buffer
	if err := Why(context.Background(), tenant, "vapp/api", "shop", time.Now(), &out); err != nil {
		t.Fatalf("why as a tenant: %v", err)
	}
	for _, want := range []string{"only the cluster admin may read VaultServer central and its grants", "logs in at https://vault.example.com/v1/auth/kubernetes-east/login as role app.shop.api and reads secret/data/shop/<path>"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("why as a tenant lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Grants(context.Background(), tenant, "shop", &out); err != nil {
		t.Fatalf("grants as a tenant: %v", err)
	}
	for _, want := range []string{"only the cluster admin may read the VaultServers and KeycloakServers", "VaultApp api on central: AccessGranted=True Granted: the grant covers everything"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("grants as a tenant lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "secret/data/shop/*") {
		t.Errorf("grants shows a tenant the server's grant:\n%s", out.String())
	}
}
