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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/vault/vaultfake"
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
		want     string // the server, or the refusal's reason after "!"
	}{
		{"named", app("eu", "", false), true, []string{"central"}, "eu"},
		{"named, written there", app("eu", "eu", true), false, nil, "eu"},
		{"the default, for a new VaultApp", app("", "", false), true, []string{"central"}, "central"},
		{"the environment's, for a new VaultApp without a default", app("", "", false), true, nil, ""},
		{"the environment's, where it wrote before a default appeared", app("", "", true), true, []string{"central"}, ""},
		{"where it wrote, though another is the default now", app("", "eu", true), true, []string{"central"}, "eu"},
		{"nothing configured", app("", "", false), false, nil, "!" + vaultv1beta1.ReasonVaultNotConfigured},
		{"two defaults", app("", "", false), true, []string{"a", "b"}, "!" + vaultv1beta1.ReasonDefaultServerAmbiguous},
		{"named, but written to the environment's", app("eu", "", true), true, nil, "!" + vaultv1beta1.ReasonServerChanged},
		{"the environment's is gone: no move to the default", app("", "", true), false, []string{"central"}, "!" + vaultv1beta1.ReasonServerChanged},
	} {
		got, refused := chooseServer(tt.app, tt.env, tt.defaults)
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
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultAuthMount{Mount: "kubernetes-prod-1"}},
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
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonServerNotFound); !strings.Contains(msg, "VaultServer eu does not exist") {
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
	mine := vaultclient.RenderPolicy("secret", vaultclient.Owner{Namespace: "shop", Name: "api", UID: "1111-2222", Cluster: testCluster}, nil)
	gone := vaultclient.RenderPolicy("secret", vaultclient.Owner{Namespace: "shop", Name: "gone", UID: "3333", Cluster: testCluster}, nil)
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
// Warning Event; Ready is untouched. Without the admin's opt-in, the
// environment's Vault is not used, and the VaultApp says why.
func TestLegacyConfiguration(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.r.Destinations = &ClusterDestinations{Reader: w.client, Env: &Destination{Vault: w.vault, Identity: w.r.Identity}, ClusterUID: "uid-1"}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if msg := w.condition(vaultv1beta1.TypeLegacyConfiguration, metav1.ConditionTrue, vaultv1beta1.ReasonLegacyConfiguration); !strings.Contains(msg, "--legacy-vault-environment") {
		t.Fatalf("LegacyConfiguration message %q", msg)
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonLegacyConfiguration)
	w.reconcile()
	for len(w.events.Events) > 0 {
		if e := <-w.events.Events; strings.Contains(e, vaultv1beta1.ReasonLegacyConfiguration) {
			t.Fatalf("a second Event: %s", e)
		}
	}

	// The opt-in withdrawn: nothing more is written to the environment's
	// Vault, and the VaultApp names the opt-in; deleted, it is still
	// removed from there (no live grant is left behind).
	w.vault.Writes = nil
	w.r.Destinations.(*ClusterDestinations).EnvIgnored = "the operator's environment names a Vault (http://vault:8200) but the cluster admin has not opted in to it"
	changed := w.app()
	changed.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read"}
	changed.Generation++
	if err := w.client.Update(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonVaultNotConfigured); !strings.Contains(msg, "has not opted in") {
		t.Fatalf("Ready message %q", msg)
	}
	if len(w.vault.Writes) > 0 {
		t.Fatalf("written without the opt-in: %v", w.vault.Writes)
	}
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(w.vault.Policies)+len(w.vault.Roles) > 0 {
		t.Fatalf("left in the environment's Vault: %v %v", w.vault.Policies, w.vault.Roles)
	}
}
