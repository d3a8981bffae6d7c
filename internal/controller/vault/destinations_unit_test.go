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

package vault

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient/vaultfake"
)

func TestChooseServer(t *testing.T) {
	synced := metav1.Now()
	app := func(ref, server string, wrote bool) *vaultv1beta1.VaultApp {
		a := shopAPI()
		if ref != "" {
			a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: ref}
		}
		a.Status.Server = server
		if wrote {
			a.Status.LastSyncTime = &synced
		}
		return a
	}
	for _, tt := range []struct {
		name     string
		app      *vaultv1beta1.VaultApp
		env      bool
		defaults []string
		twins    []string // VaultServers of the environment's Location
		want     string   // the server, or the refusal's reason after "!"
	}{
		{"named", app("eu", "", false), true, []string{"central"}, nil, "eu"},
		{"named, written there", app("eu", "eu", true), false, nil, nil, "eu"},
		{"the default, for a new VaultApp", app("", "", false), true, []string{"central"}, nil, "central"},
		{"the environment's, for a new VaultApp without a default", app("", "", false), true, nil, nil, ""},
		{"the environment's, where it wrote before a default appeared", app("", "", true), true, []string{"central"}, nil, ""},
		{"where it wrote, though another is the default now", app("", "eu", true), true, []string{"central"}, nil, "eu"},
		{"nothing configured", app("", "", false), false, nil, nil, "!" + vaultv1beta1.ReasonVaultNotConfigured},
		{"two defaults", app("", "", false), true, []string{"a", "b"}, nil, "!" + vaultv1beta1.ReasonDefaultServerAmbiguous},
		{"named, but written to the environment's", app("eu", "", true), true, nil, nil, "!" + vaultv1beta1.ReasonServerChanged},
		{"the environment's is gone: no move to the default", app("", "", true), false, []string{"central"}, nil, "!" + vaultv1beta1.ReasonServerChanged},
		{"written to the environment's: moves to its only twin", app("", "", true), true, nil, []string{"vault"}, "vault"},
		{"the twin, not the default of another place", app("", "", true), true, []string{"central"}, []string{"vault"}, "vault"},
		{"two twins: the default among them", app("", "", true), true, []string{"b"}, []string{"a", "b"}, "b"},
		{"two twins and neither the default: stays", app("", "", true), true, []string{"central"}, []string{"a", "b"}, ""},
		{"names its twin: moves", app("vault", "", true), true, nil, []string{"vault"}, "vault"},
		{"names another than its twin: refused", app("eu", "", true), true, nil, []string{"vault"}, "!" + vaultv1beta1.ReasonServerChanged},
		{"a twin takes no VaultApp that never wrote: the default does", app("", "", false), true, []string{"central"}, []string{"vault"}, "central"},
		{"written to a VaultServer: no twin moves it", app("", "eu", true), true, nil, []string{"vault"}, "eu"},
	} {
		got, refused := chooseServer(tt.app, tt.env, tt.defaults, tt.twins)
		if refused != nil {
			got = "!" + refused.reason
		}
		if got != tt.want {
			t.Errorf("%s: chose %q (%v), want %q", tt.name, got, refused, tt.want)
		}
	}
}

// A VaultApp that names a VaultServer is written there, with the server's
// name prefix and cluster; the environment's Vault is not touched.
func TestVaultAppWrittenToItsVaultServer(t *testing.T) {
	a := shopAPI()
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "eu"}
	w := newWorld(t, nil, a)
	eu := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "eu"},
		Spec: vaultv1beta1.VaultServerSpec{Address: "https://eu.example.com", Cluster: "prod-1", NamePrefix: "prod-1",
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes-prod-1", Role: "vko"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes-prod-1"}}},
			Access:  []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"team-*", "shop"}, Paths: []vaultv1beta1.VaultPathGrant{kvGrant}}}},
	}
	euVault := vaultfake.New()
	w.r.Destinations = &ClusterDestinations{Reader: w.client, Env: &Destination{Vault: w.vault, Identity: w.r.Identity}, ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: w.client, New: func(cfg vaultclient.Config) (ServerClient, error) {
			if cfg.Address != "https://eu.example.com" || cfg.KubernetesAuthMount != "kubernetes-prod-1" {
				t.Errorf("client config %+v", cfg)
			}
			return &fakeChecker{Vault: euVault}, nil
		}}}

	// Not there yet: said so, nothing written anywhere.
	w.reconcile()
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound); !strings.Contains(msg, `VaultServer "eu" does not exist or grants namespace "shop" nothing`) {
		t.Fatalf("Ready message = %q", msg)
	}
	if err := w.client.Create(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	const name = "app-prod-1.shop.api"
	if got := vaultclient.MarkOf(euVault.Policies[name]).Owner.Cluster; got != "prod-1" {
		t.Fatalf("policy %s in eu marks cluster %q; eu holds %v", name, got, euVault.Policies)
	}
	if _, ok := euVault.Roles[name]; !ok {
		t.Fatalf("no role %s in eu", name)
	}
	if len(w.vault.Writes) > 0 {
		t.Fatalf("the environment's Vault was written: %v", w.vault.Writes)
	}
	if st := w.app().Status; st.Server != "eu" || st.PolicyName != name {
		t.Fatalf("status server %q policy %q", st.Server, st.PolicyName)
	}

	// The admin takes the server's grant back: nothing stays live there.
	var now vaultv1beta1.VaultServer
	if err := w.client.Get(context.Background(), client.ObjectKey{Name: "eu"}, &now); err != nil {
		t.Fatal(err)
	}
	now.Spec.Access[0].Namespaces = []string{"team-*"}
	if err := w.client.Update(context.Background(), &now); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(euVault.Policies) > 0 || len(euVault.Roles) > 0 {
		t.Fatalf("left in eu once the grant was taken back: %v %v", euVault.Policies, euVault.Roles)
	}
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed); !strings.Contains(msg, `VaultServer "eu" grants namespace "shop" nothing`) {
		t.Fatalf("Ready message = %q", msg)
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonGrantRevoked)
	now.Spec.Access[0].Namespaces = []string{"shop"}
	if err := w.client.Update(context.Background(), &now); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)

	// The sweep goes through both. A policy in the environment's Vault
	// marked for this VaultApp, which uses eu, is kept: the two servers
	// may be one Vault, and the VaultApp exists. One of a VaultApp that
	// is gone is swept.
	mine := vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: "1111-2222", Cluster: testCluster}, nil)
	gone := vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "gone", UID: "3333", Cluster: testCluster}, nil)
	w.vault.Policies[testPolicy], w.vault.Policies["app.shop.gone"] = mine, gone
	s := &OrphanSweeper{Reader: w.client, Apps: EveryVaultApp{Reader: w.client}, Destinations: w.r.Destinations, Recorder: w.events}
	removed, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != "app.shop.gone" {
		t.Fatalf("swept %v, want only app.shop.gone", removed)
	}
	if _, ok := euVault.Policies[name]; !ok {
		t.Fatal("the sweep removed eu's live policy")
	}
	delete(w.vault.Policies, testPolicy)

	// Deleted: removed from eu.
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(euVault.Policies) > 0 || len(euVault.Roles) > 0 {
		t.Fatalf("left in eu: %v %v", euVault.Policies, euVault.Roles)
	}
}

// A server the VaultApp names and never wrote to reads the same in its
// status whether it is missing, grants the namespace nothing or is being
// deleted (even one that grants it): the tenant learns of no server she may
// not use.
func TestAnUnknownServerAnswersAsAMissingOne(t *testing.T) {
	servers := map[string]*vaultv1beta1.VaultServer{
		"missing": nil,
		"elsewhere": {ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"},
			Spec: vaultv1beta1.VaultServerSpec{Address: "https://eu.example.com", Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"team-*"}}}}},
		"going": {ObjectMeta: metav1.ObjectMeta{Name: "going", Finalizers: []string{"keep"}},
			Spec: vaultv1beta1.VaultServerSpec{Address: "https://eu.example.com", Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}}}}},
	}
	answers := map[string]bool{}
	for name, server := range servers {
		a := shopAPI()
		a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: name}
		w := newWorld(t, nil, a)
		if server != nil {
			if err := w.client.Create(context.Background(), server); err != nil {
				t.Fatal(err)
			}
		}
		if name == "going" {
			if err := w.client.Delete(context.Background(), server); err != nil {
				t.Fatal(err)
			}
		}
		w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1", Clients: &ServerClients{Reader: w.client,
			New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: vaultfake.New()}, nil }}}
		w.reconcile()
		msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound)
		answers[strings.ReplaceAll(msg, name, "NAME")] = true
	}
	if len(answers) != 1 {
		t.Fatalf("the answers differ: %v", answers)
	}
}

// A pass that wrote to Vault and whose status write conflicted (a tenant
// editing the VaultApp in a loop) leaves a status that records no write.
// When the grant is taken back, what is in Vault decides: the policy and
// role are removed, and only then does the VaultApp answer as for a
// missing server.
func TestAWriteTheStatusMissedIsRemovedWhenTheGrantGoes(t *testing.T) {
	ctx := context.Background()
	a := shopAPI()
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "eu"}
	w := newWorld(t, nil, a)
	eu := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "eu"},
		Spec: vaultv1beta1.VaultServerSpec{Address: "https://eu.example.com",
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			Access:  []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{kvGrant}}}},
	}
	if err := w.client.Create(ctx, eu); err != nil {
		t.Fatal(err)
	}
	euVault := vaultfake.New()
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1", Clients: &ServerClients{Reader: w.client,
		New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: euVault}, nil }}}
	w.conflicting(1)
	if _, err := w.r.Reconcile(ctx, w.request()); err == nil {
		t.Fatal("a pass whose status write conflicted succeeded")
	}
	if st := w.app().Status; st.WroteToVault() || len(euVault.Policies) != 1 {
		t.Fatalf("the setting of the race: status %+v, policies %v", st, euVault.Policies)
	}
	w.r.Client = w.client
	eu.Spec.Access[0].Namespaces = []string{"team-*"}
	if err := w.client.Update(ctx, eu); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(euVault.Policies) > 0 || len(euVault.Roles) > 0 {
		t.Fatalf("left in Vault once the grant was taken back: %v %v", euVault.Policies, euVault.Roles)
	}
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonGrantRevoked)
	w.reconcile()
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound); !strings.Contains(msg, "does not exist or grants namespace") {
		t.Fatalf("after the removal, Ready says %q", msg)
	}
	// What this cluster did not write there for it is never touched: a
	// policy of the name that an older release or another cluster wrote.
	for _, owner := range []vaultclient.Owner{{Namespace: "shop", Name: "api", UID: "9"}, {Namespace: "shop", Name: "api", UID: "9", Cluster: "west", ClusterID: "uid-west"}} {
		euVault.Policies["app.shop.api"] = vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, owner, nil)
		w.reconcile()
		if _, ok := euVault.Policies["app.shop.api"]; !ok {
			t.Fatalf("removed a policy of the name written by %+v", owner)
		}
		w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound)
	}
}

// A VaultApp whose VaultServer was deleted is let go when it is deleted:
// nothing can be removed from a Vault the operator no longer knows.
func TestVaultAppOfADeletedServerIsLetGo(t *testing.T) {
	a := shopAPI()
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "gone"}
	a.Status.Server = "gone"
	a.Finalizers = []string{Finalizer}
	w := newWorld(t, nil, a)
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1", Clients: &ServerClients{Reader: w.client}}
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if e := w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonDeleted); !strings.Contains(e, "VaultServer gone does not exist") {
		t.Fatalf("event = %q", e)
	}
	var gone vaultv1beta1.VaultApp
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "api"}, &gone); err == nil {
		t.Fatalf("still there, with finalizers %v", gone.Finalizers)
	}
}

// A VaultApp that wrote to a server it cannot use now (a CA that cannot be
// read) keeps its finalizer when deleted: that server is not gone.
func TestVaultAppDeletedWhileItsServerIsUnusableIsKept(t *testing.T) {
	a := shopAPI()
	a.Finalizers = []string{Finalizer}
	a.Status.Server = "one"
	w := newWorld(t, nil, a)
	if err := w.client.Create(context.Background(), &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "one"},
		Spec: vaultv1beta1.VaultServerSpec{CASecretRef: &vaultv1beta1.SecretKeySelector{Name: "missing"}}}); err != nil {
		t.Fatal(err)
	}
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1", Clients: &ServerClients{Reader: w.client}}
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.r.Reconcile(context.Background(), w.request()); err == nil {
		t.Fatal("no error: the deletion would not be retried")
	}
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonDeleteFailed); !strings.Contains(msg, "read the CA Secret") {
		t.Fatalf("Ready message = %q", msg)
	}
}

// Paths outside the KV prefix are written where the VaultServer grants
// them, and taken out of the policy when the grant is narrowed.
func TestVaultPathsFollowTheServersGrant(t *testing.T) {
	a := shopAPI()
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "eu"}
	a.Spec.Policy.VaultPaths = []vaultv1beta1.VaultPathRule{
		{Path: "database/creds/shop", Capabilities: []vaultv1beta1.Capability{"read"}},
		{Path: "pki/issue/shop", Capabilities: []vaultv1beta1.Capability{"update"}},
	}
	w := newWorld(t, nil, a)
	eu := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: vaultv1beta1.VaultServerSpec{
		Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
			kvGrant,
			{Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}},
			{Template: "pki/issue/{namespace}", Capabilities: []vaultv1beta1.Capability{"update"}},
		}}}}}
	if err := w.client.Create(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	euVault := vaultfake.New()
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: w.client, New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: euVault}, nil }}}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	policy := euVault.Policies[testPolicy]
	for _, want := range []string{`path "database/creds/shop" {`, `path "pki/issue/shop" {`, `path "secret/data/shop/db/*" {`} {
		if !strings.Contains(policy, want) {
			t.Fatalf("policy lacks %s:\n%s", want, policy)
		}
	}

	eu.Spec.Access[0].Paths = eu.Spec.Access[0].Paths[:2]
	if err := w.client.Update(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if policy := euVault.Policies[testPolicy]; strings.Contains(policy, "pki/issue/shop") || !strings.Contains(policy, "database/creds/shop") {
		t.Fatalf("policy after the grant was narrowed:\n%s", policy)
	}
	w.condition(vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonGrantNarrowed)
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed); !strings.Contains(msg, `update on "pki/issue/shop" not granted`) {
		t.Fatalf("Ready message = %q", msg)
	}
}

// Retain keeps no policy with paths a VaultServer granted: no pass would
// ever shrink it again.
func TestRetainKeepsNoGrantedPaths(t *testing.T) {
	a := shopAPI()
	a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
	a.Spec.Policy.VaultPaths = []vaultv1beta1.VaultPathRule{{Path: "database/creds/shop", Capabilities: []vaultv1beta1.Capability{"read"}}}
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "eu"}
	w := newWorld(t, nil, a)
	eu := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: vaultv1beta1.VaultServerSpec{
		Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, AllowRetain: true, Paths: []vaultv1beta1.VaultPathGrant{
			kvGrant, {Template: "database/creds/{namespace}", Capabilities: []vaultv1beta1.Capability{"read"}}}}}}}
	if err := w.client.Create(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	euVault := vaultfake.New()
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: w.client, New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: euVault}, nil }}}
	w.reconcile()
	if !strings.Contains(euVault.Policies[testPolicy], "database/creds/shop") {
		t.Fatalf("not written:\n%s", euVault.Policies[testPolicy])
	}
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(euVault.Policies) > 0 {
		t.Fatalf("retained with a granted path:\n%s", euVault.Policies[testPolicy])
	}
}

// kvGrant gives a namespace read and list on its own KV prefix, as the
// namespace annotations' default did.
var kvGrant = vaultv1beta1.VaultPathGrant{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}

// A VaultServer's entries, not the namespace's annotations, grant the KV
// rules, the token TTL and Retain: narrowing an entry shrinks the live
// policy and role, and Retain follows allowRetain.
func TestVaultServerAccessGrantsKVRulesTTLAndRetain(t *testing.T) {
	a := shopAPI(vaultv1beta1.PolicyRule{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "update"}})
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "eu"}
	a.Spec.KubernetesAuth.TokenTTL = &metav1.Duration{Duration: 4 * time.Hour}
	a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
	// The annotations grant everything: they count only on the environment's Vault.
	w := newWorld(t, map[string]string{tenancy.AllowedCapabilitiesAnnotation: "read,update,list", tenancy.AllowRetainAnnotation: "true"}, a)
	eu := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: vaultv1beta1.VaultServerSpec{
		Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, MaxTokenTTL: &metav1.Duration{Duration: time.Hour}, Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "update"}}}}}}}
	if err := w.client.Create(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	euVault := vaultfake.New()
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: w.client, New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: euVault}, nil }}}

	w.reconcile()
	if role := euVault.Roles[testPolicy]; role.TTL != time.Hour || role.MaxTTL != time.Hour {
		t.Fatalf("role TTL %s, max TTL %s, want the entry's cap 1h for both", role.TTL, role.MaxTTL)
	}
	if !strings.Contains(euVault.Policies[testPolicy], `capabilities = ["read", "update"]`) {
		t.Fatalf("policy:\n%s", euVault.Policies[testPolicy])
	}
	msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
	for _, want := range []string{"4h0m0s is over the 1h0m0s", `Retain not allowed in namespace "shop" by VaultServer "eu"`} {
		if !strings.Contains(msg, want) {
			t.Fatalf("Ready message %q lacks %q", msg, want)
		}
	}

	// The entry narrowed to read: update leaves the live policy.
	eu.Spec.Access[0].Paths[0].Capabilities = []vaultv1beta1.Capability{"read"}
	if err := w.client.Update(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if p := euVault.Policies[testPolicy]; strings.Contains(p, "update") || !strings.Contains(p, `"read"`) {
		t.Fatalf("policy after the entry was narrowed:\n%s", p)
	}
	w.condition(vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonGrantNarrowed)

	// No allowRetain: deletion removes, whatever the annotation says.
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(euVault.Policies)+len(euVault.Roles) > 0 {
		t.Fatalf("left in Vault without allowRetain: %v %v", euVault.Policies, euVault.Roles)
	}
	if note := w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonDeleted); !strings.Contains(note, "allowRetain in VaultServer eu's spec.access") {
		t.Fatalf("Deleted event %q", note)
	}
}

// A VaultApp on the environment's Vault says LegacyConfiguration, with one
// Warning Event; Ready is untouched. A VaultServer of the same Location
// takes it over once it grants all the VaultApp asks: before, the VaultApp
// stays and says why; then it moves with its policy neither rewritten nor
// removed (the role only gains the server's token cap), and the condition
// goes.
func TestLegacyVaultAppMovesToItsTwin(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	env := &Destination{Vault: w.vault, Identity: w.r.Identity,
		Where: Location{Address: "http://vault:8200", KVMount: "secret", AppAuthMount: "kubernetes", Cluster: testCluster}}
	w.r.Destinations = &ClusterDestinations{Reader: w.client, Env: env, ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: w.client, New: func(vaultclient.Config) (ServerClient, error) {
			return &fakeChecker{Vault: w.vault}, nil // the same Vault
		}}}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if msg := w.condition(vaultv1beta1.TypeLegacyConfiguration, metav1.ConditionTrue, vaultv1beta1.ReasonLegacyConfiguration); !strings.Contains(msg, "same address, namespace, cluster, namePrefix, kvMount and appAuth") {
		t.Fatalf("LegacyConfiguration message %q", msg)
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonLegacyConfiguration)
	if got := w.app().Status.Vault; got == nil || got.Address != "http://vault:8200" || got.LoginPath != "auth/kubernetes/login" || got.KVPrefix != "shop/" {
		t.Fatalf("status.vault on the environment's Vault: %+v", got)
	}
	w.reconcile()
	for len(w.events.Events) > 0 {
		if e := <-w.events.Events; strings.Contains(e, vaultv1beta1.ReasonLegacyConfiguration) {
			t.Fatalf("a second Event: %s", e)
		}
	}
	policy := w.vault.Policies["app.shop.api"]

	// Its twin, granting less than the VaultApp asks: it stays, Ready,
	// and says what the admin must grant.
	twin := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "vault"}, Spec: vaultv1beta1.VaultServerSpec{
		Address: "http://vault:8200/", Cluster: testCluster,
		Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "vko"}},
		AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
		Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"other"}, Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}},
	}}
	if err := w.client.Create(context.Background(), twin); err != nil {
		t.Fatal(err)
	}
	// Not listing the namespace, it is not named to the app team.
	w.reconcile()
	if msg := w.condition(vaultv1beta1.TypeLegacyConfiguration, metav1.ConditionTrue, vaultv1beta1.ReasonLegacyConfiguration); strings.Contains(msg, "vault ") || !strings.Contains(msg, "does not grant this namespace") {
		t.Fatalf("LegacyConfiguration message, a twin that does not list the namespace: %q", msg)
	}
	twin.Spec.Access[0].Namespaces = []string{"shop"}
	if err := w.client.Update(context.Background(), twin); err != nil {
		t.Fatal(err)
	}
	w.vault.Writes = nil
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if msg := w.condition(vaultv1beta1.TypeLegacyConfiguration, metav1.ConditionTrue, vaultv1beta1.ReasonLegacyConfiguration); !strings.Contains(msg, "VaultServer vault writes where the environment's Vault does, but does not grant all") {
		t.Fatalf("LegacyConfiguration message, held back: %q", msg)
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonLegacyConfiguration)
	if st := w.app().Status; st.Server != "" || len(w.vault.Writes) > 0 {
		t.Fatalf("moved to a twin that grants less: server %q, writes %v", st.Server, w.vault.Writes)
	}

	// Granted all: it moves, with nothing removed and the policy as it was.
	if err := w.client.Get(context.Background(), client.ObjectKey{Name: "vault"}, twin); err != nil {
		t.Fatal(err)
	}
	twin.Spec.Access[0].Paths[0].Capabilities = []vaultv1beta1.Capability{"read", "list"}
	if err := w.client.Update(context.Background(), twin); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	app := w.app()
	if app.Status.Server != "vault" || meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeLegacyConfiguration) != nil {
		t.Fatalf("after the move: server %q, conditions %+v", app.Status.Server, app.Status.Conditions)
	}
	if w.vault.Policies["app.shop.api"] != policy {
		t.Fatalf("policy rewritten in the move:\n%s\nwas\n%s", w.vault.Policies["app.shop.api"], policy)
	}
	if want := []string{vaultclient.OpWriteRole + " app.shop.api"}; !slices.Equal(w.vault.Writes, want) {
		t.Fatalf("writes in the move %v, want %v (the role gains the server's token cap)", w.vault.Writes, want)
	}
	if role := w.vault.Roles["app.shop.api"]; role.MaxTTL != vaultv1beta1.MaxTokenTTL {
		t.Fatalf("role after the move: %+v", role)
	}
}

// A VaultServer created or changed wakes the VaultApps it may serve: those
// naming it or written to it, those with no server yet (it may be the
// default now), and those on the environment's Vault (it may be their
// twin); not those written to another server.
func TestAVaultServerWakesTheVaultAppsItMayServe(t *testing.T) {
	synced := metav1.Now()
	app := func(name, ref, server string, wrote bool) *vaultv1beta1.VaultApp {
		a := shopAPI()
		a.Name = name
		if ref != "" {
			a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: ref}
		}
		a.Status.Server = server
		if wrote {
			a.Status.LastSyncTime = &synced
		}
		return a
	}
	w := newWorld(t, nil, app("names-it", "eu", "", false))
	for _, a := range []*vaultv1beta1.VaultApp{app("wrote-there", "", "eu", true), app("new", "", "", false),
		app("on-env", "", "", true), app("elsewhere", "", "other", true), app("names-another", "other", "", false)} {
		if err := w.client.Create(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if err := w.client.Status().Update(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, req := range w.r.vaultAppsOf(context.Background(), &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "eu"}}) {
		got = append(got, req.Name)
	}
	slices.Sort(got)
	if want := []string{"names-it", "new", "on-env", "wrote-there"}; !slices.Equal(got, want) {
		t.Fatalf("woken %v, want %v", got, want)
	}
}
