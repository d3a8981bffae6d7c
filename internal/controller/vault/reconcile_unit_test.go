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
	"fmt"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient/vaultfake"
)

const testPolicy = "app.shop.api"

// testCluster is the cluster of the world's operator.
const testCluster = "east"

// world is one namespace "shop", one VaultApp "api" in it, a fake Vault,
// and the reconciler between them.
type world struct {
	t      *testing.T
	client client.Client
	vault  *vaultfake.Vault
	events *events.FakeRecorder
	r      *VaultAppReconciler
}

// The unit tests' Vault answers what the controller asks of the real one.
var _ VaultAPI = (*vaultfake.Vault)(nil)

func newWorld(t *testing.T, nsAnnotations map[string]string, app *vaultv1beta1.VaultApp) *world {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = eventsv1.AddToScheme(scheme)
	_ = vaultv1beta1.AddToScheme(scheme)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Annotations: nsAnnotations}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ns, app).WithStatusSubresource(&vaultv1beta1.VaultApp{}).Build()
	w := &world{t: t, client: c, vault: vaultfake.New(), events: events.NewFakeRecorder(100)}
	w.r = &VaultAppReconciler{Client: c, Vault: w.vault, Recorder: w.events, Identity: Identity{Cluster: testCluster, ID: "uid-1"}}
	return w
}

func shopAPI(rules ...vaultv1beta1.PolicyRule) *vaultv1beta1.VaultApp {
	if len(rules) == 0 {
		rules = []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}}
	}
	return &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop", UID: "1111-2222", Generation: 1},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy:         vaultv1beta1.PolicySpec{Rules: rules},
			KubernetesAuth: vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"api"}},
		},
	}
}

func (w *world) request() ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: "api"}}
}

func (w *world) reconcile() {
	w.t.Helper()
	if _, err := w.r.Reconcile(context.Background(), w.request()); err != nil {
		w.t.Fatalf("reconcile: %v", err)
	}
}

func (w *world) app() *vaultv1beta1.VaultApp {
	w.t.Helper()
	var app vaultv1beta1.VaultApp
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "shop", Name: "api"}, &app); err != nil {
		w.t.Fatal(err)
	}
	return &app
}

func (w *world) setNamespaceAnnotations(a map[string]string) {
	w.t.Helper()
	var ns corev1.Namespace
	_ = w.client.Get(context.Background(), client.ObjectKey{Name: "shop"}, &ns)
	ns.Annotations = a
	if err := w.client.Update(context.Background(), &ns); err != nil {
		w.t.Fatal(err)
	}
}

// condition asserts one condition of the VaultApp.
func (w *world) condition(typ string, status metav1.ConditionStatus, reason string) string {
	w.t.Helper()
	c := meta.FindStatusCondition(w.app().Status.Conditions, typ)
	if c == nil || c.Status != status || c.Reason != reason {
		w.t.Fatalf("condition %s = %+v, want %s/%s", typ, c, status, reason)
	}
	return c.Message
}

// event asserts that an Event with this type and reason was recorded, and
// returns its text.
func (w *world) event(eventType, reason string) string {
	w.t.Helper()
	for {
		select {
		case e := <-w.events.Events:
			if strings.HasPrefix(e, eventType+" "+reason+" ") {
				return e
			}
		case <-time.After(100 * time.Millisecond):
			w.t.Fatalf("no %s %s Event", eventType, reason)
			return ""
		}
	}
}

func TestNewVaultAppWritesPolicyAndRoleMarkedWithItsUIDAndCluster(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonCreated)
	mark := vaultclient.MarkOf(w.vault.Policies[testPolicy])
	if !mark.Managed || mark.Owner != (vaultclient.Owner{Namespace: "shop", Name: "api", UID: "1111-2222", Cluster: testCluster, ClusterID: "uid-1"}) {
		t.Fatalf("policy mark = %+v\n%s", mark, w.vault.Policies[testPolicy])
	}
	if got := w.vault.Roles[testPolicy].Policies; !slices.Equal(got, []string{testPolicy}) {
		t.Fatalf("role token_policies = %v", got)
	}
	if w.vault.Reads != 0 {
		t.Fatalf("a new VaultApp whose names a listing shows free cost %d reads, want none", w.vault.Reads)
	}
	w.vault.Writes = nil
	w.reconcile()
	if len(w.vault.Writes) > 0 {
		t.Fatalf("a steady reconcile wrote %v", w.vault.Writes)
	}
	if w.vault.Reads != 2 {
		t.Fatalf("a steady reconcile read %d objects, want the policy and the role", w.vault.Reads)
	}
}

// Without a listing (the operator's policy may not list roles), a new
// VaultApp's names are read one by one, and the result is the same.
func TestNewVaultAppWithoutAListingReadsItsNames(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.vault.NoListing = true
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if w.vault.Reads != 2 || len(w.vault.Writes) != 2 {
		t.Fatalf("reads %d, writes %v; want 2 reads, then the policy and the role written", w.vault.Reads, w.vault.Writes)
	}
}

func TestNarrowedGrantShrinksThePolicy(t *testing.T) {
	w := newWorld(t, map[string]string{tenancy.AllowedCapabilitiesAnnotation: "read,update,list"},
		shopAPI(vaultv1beta1.PolicyRule{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "update"}}))
	w.reconcile()
	if !strings.Contains(w.vault.Policies[testPolicy], `capabilities = ["read", "update"]`) {
		t.Fatalf("policy before narrowing:\n%s", w.vault.Policies[testPolicy])
	}

	w.setNamespaceAnnotations(map[string]string{tenancy.AllowedCapabilitiesAnnotation: "read"})
	w.reconcile()
	policy := w.vault.Policies[testPolicy]
	if strings.Contains(policy, "update") || !strings.Contains(policy, `capabilities = ["read"]`) {
		t.Fatalf("policy after narrowing still grants more than read:\n%s", policy)
	}
	msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
	if !strings.Contains(msg, "update not allowed") {
		t.Fatalf("Ready message %q does not say what was taken back", msg)
	}
	w.condition(vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonGrantNarrowed)
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonGrantNarrowed)
}

func TestRevokedGrantRemovesPolicyAndRole(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	w.setNamespaceAnnotations(map[string]string{tenancy.AllowedCapabilitiesAnnotation: ""})
	w.reconcile()
	if _, ok := w.vault.Policies[testPolicy]; ok {
		t.Fatal("policy still in Vault after the grant was taken back")
	}
	if _, ok := w.vault.Roles[testPolicy]; ok {
		t.Fatal("role still in Vault after the grant was taken back")
	}
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonGrantRevoked)

	// Granted again: written again.
	w.setNamespaceAnnotations(nil)
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if _, ok := w.vault.Policies[testPolicy]; !ok {
		t.Fatal("policy not written again once granted")
	}
}

func TestVaultObjectsTheOperatorDidNotWriteAreLeftAlone(t *testing.T) {
	foreignPolicy := `path "secret/*" { capabilities = ["read"] }`
	retained := vaultclient.RetainedText(vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: "old"}, nil),
		vaultclient.Owner{Namespace: "shop", Name: "api", UID: "old"})
	tests := []struct {
		name   string
		policy string
		role   *vaultclient.Role
		want   string
	}{
		{"policy without the mark", foreignPolicy, nil, "policy app.shop.api exists in Vault and was not written for this VaultApp (its first line carries no mark of the operator)"},
		{"policy retained from an earlier VaultApp", retained, nil, "it was retained from VaultApp shop/api (uid old)"},
		{"foreign policy with a role that grants it", foreignPolicy, &vaultclient.Role{Policies: []string{testPolicy}, Namespace: "shop"},
			"policy app.shop.api exists in Vault and was not written for this VaultApp"},
		{"retained policy with its role", retained, &vaultclient.Role{Policies: []string{testPolicy}, Namespace: "shop"}, "it was retained from VaultApp"},
		{"role that grants other policies", "", &vaultclient.Role{Policies: []string{"admin"}, Namespace: "shop"},
			"role app.shop.api exists in Vault and was not written for this VaultApp (it grants policies [admin] to ServiceAccounts of shop, where the operator writes policy app.shop.api alone for namespace shop)"},
		// An admin's role under the name, granting the VaultApp's policy
		// among others, or to another namespace's ServiceAccounts.
		{"role that grants its policy and another", "", &vaultclient.Role{Policies: []string{testPolicy, "admin"}, Namespace: "shop", ServiceAccounts: []string{"api"}},
			"role app.shop.api exists in Vault and was not written for this VaultApp (it grants policies [app.shop.api admin] to ServiceAccounts of shop"},
		{"role that binds another namespace", "", &vaultclient.Role{Policies: []string{testPolicy}, Namespace: "ops", ServiceAccounts: []string{"deployer"}},
			"(it grants policies [app.shop.api] to ServiceAccounts of ops, where the operator writes policy app.shop.api alone for namespace shop)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, nil, shopAPI())
			if tt.policy != "" {
				w.vault.Policies[testPolicy] = tt.policy
			}
			if tt.role != nil {
				w.vault.Roles[testPolicy] = *tt.role
			}
			w.reconcile()
			if len(w.vault.Writes) > 0 {
				t.Fatalf("wrote %v over an object it does not own", w.vault.Writes)
			}
			msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotOwned)
			if !strings.Contains(msg, tt.want) {
				t.Fatalf("message %q\ndoes not say %q", msg, tt.want)
			}
			w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonNotOwned)

			// Deleting the VaultApp does not delete them either.
			app := w.app()
			if err := w.client.Delete(context.Background(), app); err != nil {
				t.Fatal(err)
			}
			w.reconcile()
			if len(w.vault.Writes) > 0 {
				t.Fatalf("deletion wrote %v to objects it does not own", w.vault.Writes)
			}
		})
	}
}

func TestHandEditThatDroppedTheMarkIsRepaired(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	w.vault.Policies[testPolicy] = `path "secret/*" { capabilities = ["sudo", "read"] }`
	w.vault.Roles[testPolicy] = vaultclient.Role{Policies: []string{"root"}, Namespace: "*"}
	w.reconcile()
	if !vaultclient.MarkOf(w.vault.Policies[testPolicy]).Managed || strings.Contains(w.vault.Policies[testPolicy], "sudo") {
		t.Fatalf("drift not repaired:\n%s", w.vault.Policies[testPolicy])
	}
	if got := w.vault.Roles[testPolicy].Policies; !slices.Equal(got, []string{testPolicy}) {
		t.Fatalf("role drift not repaired: %v", got)
	}
	w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonDriftRepaired)
}

func TestSpecThatBypassedTheWebhookWritesNothing(t *testing.T) {
	rules := make([]vaultv1beta1.PolicyRule, 65)
	for i := range rules {
		rules[i] = vaultv1beta1.PolicyRule{Path: "db", Capabilities: []vaultv1beta1.Capability{"read"}}
	}
	w := newWorld(t, nil, shopAPI(rules...))
	w.reconcile()
	if len(w.vault.Writes) > 0 {
		t.Fatalf("wrote %v for a spec the schema refuses", w.vault.Writes)
	}
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed); !strings.Contains(msg, "must have at most 64 items") {
		t.Fatalf("message = %q", msg)
	}
}

func TestDeletionPolicy(t *testing.T) {
	tests := []struct {
		name        string
		policy      vaultv1beta1.DeletionPolicy
		annotations map[string]string
		wantKept    bool
		wantEvent   string
	}{
		{"Delete removes", vaultv1beta1.DeletionPolicyDelete, nil, false, "removed policy and role app.shop.api from Vault"},
		{"Retain where the admin allows it releases", vaultv1beta1.DeletionPolicyRetain, map[string]string{tenancy.AllowRetainAnnotation: "true"}, true, "left policy and role"},
		{"Retain the admin did not allow removes", vaultv1beta1.DeletionPolicyRetain, nil, false, "deletionPolicy Retain is not allowed in this namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := shopAPI()
			app.Spec.DeletionPolicy = tt.policy
			w := newWorld(t, tt.annotations, app)
			w.reconcile()
			if err := w.client.Delete(context.Background(), w.app()); err != nil {
				t.Fatal(err)
			}
			w.reconcile()
			text, kept := w.vault.Policies[testPolicy]
			_, roleKept := w.vault.Roles[testPolicy]
			if kept != tt.wantKept || roleKept != tt.wantKept {
				t.Fatalf("policy kept %v, role kept %v; want %v", kept, roleKept, tt.wantKept)
			}
			if kept && !vaultclient.MarkOf(text).Retained {
				t.Fatalf("retained policy not marked as released:\n%s", text)
			}
			found := false
			for len(w.events.Events) > 0 {
				if e := <-w.events.Events; strings.Contains(e, tt.wantEvent) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no Event saying %q", tt.wantEvent)
			}
		})
	}
}

func TestOrphanSweep(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile() // app.shop.api, whose VaultApp exists
	gone := vaultclient.Owner{Namespace: "shop", Name: "gone", UID: "3333", Cluster: testCluster}
	w.vault.Policies["app.shop.gone"] = vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, gone, nil)
	w.vault.Roles["app.shop.gone"] = vaultclient.Role{Policies: []string{"app.shop.gone"}, Namespace: "shop"}
	kept := vaultclient.Owner{Namespace: "shop", Name: "kept", UID: "4444"}
	w.vault.Policies["app.shop.kept"] = vaultclient.RetainedText(vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, kept, nil), kept)
	w.vault.Policies["app.shop.foreign"] = `path "x" { capabilities = ["read"] }`
	// 0.1 marked no UID, and did not mark what Retain kept: left alone.
	w.vault.Policies["app.shop.old"] = "# Managed by vault-keycloak-operator for VaultApp shop/old.\n"
	w.vault.Writes = nil

	s := &OrphanSweeper{Reader: w.client, Vault: w.vault, Recorder: w.events, Identity: w.r.Identity}
	removed, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"app.shop.gone"}) {
		t.Fatalf("removed %v, want only app.shop.gone", removed)
	}
	want := []string{vaultclient.OpDeleteRole + " app.shop.gone", vaultclient.OpDeletePolicy + " app.shop.gone"}
	if !slices.Equal(w.vault.Writes, want) {
		t.Fatalf("writes = %v, want %v", w.vault.Writes, want)
	}
	if e := w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonOrphanRemoved); !strings.Contains(e, "VaultApp shop/gone (uid 3333) no longer exists") {
		t.Fatalf("event = %q", e)
	}
}

func TestSpecMadeInvalidPastTheWebhookRemovesWhatWasLive(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	if _, ok := w.vault.Policies[testPolicy]; !ok {
		t.Fatal("not written")
	}
	app := w.app()
	app.Spec.Policy.Rules[0].Path = "../other-team/db"
	if err := w.client.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if _, ok := w.vault.Policies[testPolicy]; ok {
		t.Fatal("the policy of the earlier spec is still live")
	}
	if _, ok := w.vault.Roles[testPolicy]; ok {
		t.Fatal("the role of the earlier spec is still live")
	}
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed); !strings.Contains(msg, `must stay inside the namespace's prefix`) {
		t.Fatalf("Ready message = %q", msg)
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonGrantRevoked)
}

func TestPolicyWrittenByTheFirstReleaseIsAdoptedAndNarrowed(t *testing.T) {
	// 0.1's mark has no UID, and the VaultApp's status was not Synced
	// (the admin had narrowed its grant): it is still the operator's.
	w := newWorld(t, map[string]string{tenancy.AllowedCapabilitiesAnnotation: "read"},
		shopAPI(vaultv1beta1.PolicyRule{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "update"}}))
	w.vault.Policies[testPolicy] = "# Managed by vault-keycloak-operator for VaultApp shop/api.\n\npath \"secret/data/shop/db/*\" {\n  capabilities = [\"read\", \"update\"]\n}\n"
	w.vault.Roles[testPolicy] = vaultclient.Role{Policies: []string{testPolicy}, Namespace: "shop", ServiceAccounts: []string{"api"}, TTL: time.Hour}
	w.reconcile()
	if text := w.vault.Policies[testPolicy]; strings.Contains(text, "update") || !vaultclient.MarkOf(text).Managed || vaultclient.MarkOf(text).Owner.UID != "1111-2222" {
		t.Fatalf("0.1 policy not narrowed and re-marked:\n%s", text)
	}
	w.condition(vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonGrantNarrowed)
}

// A Vault that does not answer is told apart from one that refuses: the
// VaultApp says VaultUnavailable and waits for Vault (one probe for all),
// where a refusal is retried with backoff alone: OperatorForbidden when
// the operator's own Vault policy is the cause (the admin's to fix),
// VaultError otherwise.
func TestVaultThatDoesNotAnswerIsWaitedFor(t *testing.T) {
	down := fmt.Errorf("%w: %w", vaultclient.ErrUnavailable, &url.Error{Op: "Get", URL: "http://vault:8200/v1/sys/policies/acl/app.shop.api", Err: syscall.ECONNREFUSED})
	refused := &vaultapi.ResponseError{StatusCode: 403, Errors: []string{"permission denied"}}
	for _, tc := range []struct {
		name       string
		fail       error
		reason     string
		waitingFor int
	}{
		{"connection refused", down, vaultv1beta1.ReasonVaultUnavailable, 1},
		{"sealed", fmt.Errorf("%w: %w", vaultclient.ErrUnavailable, &vaultapi.ResponseError{StatusCode: 503, Errors: []string{"Vault is sealed"}}), vaultv1beta1.ReasonVaultUnavailable, 1},
		{"permission denied: the admin's policy for the operator", refused, vaultv1beta1.ReasonOperatorForbidden, 0},
		{"another refusal", &vaultapi.ResponseError{StatusCode: 400, Errors: []string{"invalid request"}}, vaultv1beta1.ReasonVaultError, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, nil, shopAPI())
			w.r.Outage = outage.New(time.Hour)
			w.vault.Fail = tc.fail
			req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: "api"}}
			if _, err := w.r.Reconcile(context.Background(), req); err == nil {
				t.Fatal("a failed sync returned no error: it would not be retried")
			}
			msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, tc.reason)
			if tc.reason == vaultv1beta1.ReasonOperatorForbidden && !strings.Contains(msg, "the Vault admin must let the policies of") {
				t.Errorf("the message does not say the Vault admin acts: %s", msg)
			}
			w.event(corev1.EventTypeWarning, tc.reason)
			if got := w.r.Outage.Held((&Destination{}).outageKey()); got != tc.waitingFor {
				t.Fatalf("%d VaultApps wait for Vault, want %d", got, tc.waitingFor)
			}
		})
	}
}

// A VaultApp that cannot be removed from Vault while its namespace is being
// deleted keeps its finalizer, says so in its conditions, and tells the
// namespace (no Event can be created inside a terminating namespace); it
// waits for Vault, and goes once Vault answers.
func TestNamespaceDeletedWhileVaultIsDown(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.r.Outage = outage.New(time.Hour)
	w.reconcile()
	w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonCreated)
	var ns corev1.Namespace
	_ = w.client.Get(context.Background(), client.ObjectKey{Name: "shop"}, &ns)
	ns.Finalizers = []string{"test/hold"} // the fake client deletes at once without one
	if err := w.client.Update(context.Background(), &ns); err != nil {
		t.Fatal(err)
	}
	if err := w.client.Delete(context.Background(), &ns); err != nil {
		t.Fatal(err)
	}
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.vault.Fail = fmt.Errorf("%w: %w", vaultclient.ErrUnavailable, &url.Error{Op: "Delete", URL: "http://vault:8200", Err: syscall.ECONNREFUSED})
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "shop", Name: "api"}}
	if _, err := w.r.Reconcile(context.Background(), req); err == nil {
		t.Fatal("a failed removal returned no error")
	}
	msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonDeleteFailed)
	if !strings.Contains(msg, "Vault does not answer") {
		t.Fatalf("Ready says %q", msg)
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonDeleteFailed)
	// The namespace is told too, by an Event in kube-system (never in
	// default, where every tenant reads it).
	var told eventsv1.EventList
	if err := w.client.List(context.Background(), &told, client.InNamespace("kube-system")); err != nil {
		t.Fatal(err)
	}
	if len(told.Items) != 1 || told.Items[0].Regarding.Kind != "Namespace" || told.Items[0].Regarding.Name != "shop" ||
		!strings.Contains(told.Items[0].Note, "VaultApp api keeps finalizer "+Finalizer) {
		t.Fatalf("the namespace was not told what holds it, in kube-system: %+v", told.Items)
	}
	if w.r.Outage.Held((&Destination{}).outageKey()) != 1 {
		t.Fatal("the VaultApp does not wait for Vault")
	}
	w.vault.Fail = nil
	w.reconcile()
	if len(w.vault.Policies)+len(w.vault.Roles) != 0 {
		t.Fatalf("left in Vault: %v %v", w.vault.Policies, w.vault.Roles)
	}
}
