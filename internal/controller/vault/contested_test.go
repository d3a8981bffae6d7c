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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient/vaultfake"
)

// Two clusters without a name prefix on one Vault: east's VaultApp finds
// the policy held by west's. East's check asks for the name in its
// registration; west's check lists it as contested in its VaultServer's
// status, and says so; once east no longer asks, west's next check
// drops it.
func TestAContestedNameIsAskedForAndReported(t *testing.T) {
	shared := vaultfake.New()
	cluster := func(name, uid string, policySynced metav1.Condition) (*VaultServerReconciler, client.Client) {
		server := centralVault()
		server.Spec.Cluster = name
		app := shopAPI()
		synced := metav1.Now() // east's once, before it found the name held
		app.Status = vaultv1beta1.VaultAppStatus{Server: "central", PolicyName: testPolicy, LastSyncTime: &synced, Conditions: []metav1.Condition{policySynced}}
		scheme := runtime.NewScheme()
		_ = corev1.AddToScheme(scheme)
		_ = vaultv1beta1.AddToScheme(scheme)
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(server, app).WithStatusSubresource(server, app).Build()
		return &VaultServerReconciler{Client: c, Recorder: events.NewFakeRecorder(10), ClusterUID: uid,
			Clients: &ServerClients{Reader: c, New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: shared}, nil }}}, c
	}
	// West's last pass failed (Vault did not answer): the name is still
	// held, and its tokens must stay short.
	west, westClient := cluster("west", "uid-w", metav1.Condition{Type: vaultv1beta1.TypePolicySynced, Status: metav1.ConditionFalse, Reason: vaultv1beta1.ReasonVaultUnavailable})
	east, eastClient := cluster("east", "uid-e", metav1.Condition{Type: vaultv1beta1.TypePolicySynced, Status: metav1.ConditionFalse, Reason: vaultv1beta1.ReasonHeldByAnotherCluster})
	check := func(r *VaultServerReconciler, c client.Client) *vaultv1beta1.VaultServer {
		t.Helper()
		r.checked = nil // the check interval is over
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "central"}}); err != nil {
			t.Fatal(err)
		}
		var s vaultv1beta1.VaultServer
		if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	check(west, westClient)
	check(east, eastClient)
	if reg, _ := vaultclient.ParseRegistration(shared.Registrations[vaultclient.RegistrationName("east")]); !slices.Equal(reg.Wants["central"].Names, []string{testPolicy}) {
		t.Fatalf("east's registration asks for %v, want central: [%s]", reg.Wants, testPolicy)
	}
	if s := check(east, eastClient); len(s.Status.ContestedPolicies) > 0 {
		t.Fatalf("east, which holds nothing, lists %v as contested", s.Status.ContestedPolicies)
	}
	s := check(west, westClient)
	if !slices.Equal(s.Status.ContestedPolicies, []string{testPolicy}) {
		t.Fatalf("west's status.contestedPolicies = %v, want [%s]", s.Status.ContestedPolicies, testPolicy)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, vaultv1beta1.TypeRegistered); c == nil || c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, "ask for 1 of this cluster's policies too") || !strings.Contains(c.Message, "at most 5m0s") {
		t.Fatalf("west's Registered: %+v", c)
	}

	// East's VaultApp is gone: east asks for nothing, and west's next
	// check holds the name uncontested.
	if err := eastClient.Delete(context.Background(), shopAPI()); err != nil {
		t.Fatal(err)
	}
	check(east, eastClient)
	if s := check(west, westClient); len(s.Status.ContestedPolicies) > 0 {
		t.Fatalf("after east's VaultApp went, west still lists %v", s.Status.ContestedPolicies)
	}
}

// What a check decides of requests, without I/O: this server's replace
// its own, another server's of the cluster stay while fresh; another
// cluster's count only while fresh, only for names this cluster holds, and
// never this cluster's own under a former name.
func TestRequestsForNames(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	old := now.Add(-claimFresh)
	merged := mergeWants(map[string]vaultclient.Wanted{
		"central": {At: now.Add(-time.Minute), Names: []string{"app.shop.old"}},
		"second":  {At: now.Add(-time.Minute), Names: []string{"app.shop.b"}},
		"gone":    {At: old, Names: []string{"app.shop.c"}},
	}, map[string]vaultclient.Wanted{"central": {At: now}}, now)
	if len(merged) != 1 || !slices.Equal(merged["second"].Names, []string{"app.shop.b"}) {
		t.Fatalf("merged requests %+v, want the second server's alone", merged)
	}
	renewed := mergeWants(map[string]vaultclient.Wanted{"central": {At: old, Names: []string{"app.shop.old"}}},
		map[string]vaultclient.Wanted{"central": {At: now, Names: []string{"app.shop.new"}}}, now)
	if w := renewed["central"]; !slices.Equal(w.Names, []string{"app.shop.new"}) || !w.At.Equal(now) {
		t.Fatalf("this server's requests %+v, want its new ones, renewed now", renewed)
	}
	others := []vaultclient.Registration{
		{Cluster: "east", ID: "uid-e", Wants: map[string]vaultclient.Wanted{
			"a": {At: now.Add(-time.Minute), Names: []string{"app.shop.api", "app.shop.not-held"}},
			"b": {At: old, Names: []string{"app.shop.stale"}},
		}},
		{Cluster: "former-name", ID: "uid-w", Wants: map[string]vaultclient.Wanted{"a": {At: now, Names: []string{"app.shop.mine"}}}},
	}
	held := map[string]bool{"app.shop.api": true, "app.shop.stale": true, "app.shop.mine": true}
	if got := contestedPolicies("uid-w", held, others, now); !slices.Equal(got, []string{"app.shop.api"}) {
		t.Fatalf("contested %v, want [app.shop.api]", got)
	}
}

// The holder of a contested name writes its role with tokens that live at
// most ContestedTokenTTL, renewals included, and says so; the deletion's
// Event says how long tokens issued before keep working; once the name is
// no longer asked for, the role gets the spec's TTLs back.
func TestAContestedPolicysTokensAreShortLived(t *testing.T) {
	a := shopAPI()
	a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "eu"}
	w := newWorld(t, nil, a)
	eu := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "eu"},
		Spec: vaultv1beta1.VaultServerSpec{Address: "https://eu.example.com", Cluster: "west",
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "vko"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			Access:  []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{kvGrant}}}},
	}
	if err := w.client.Create(context.Background(), eu); err != nil {
		t.Fatal(err)
	}
	euVault := vaultfake.New()
	w.r.Destinations = &ClusterDestinations{Reader: w.client, ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: w.client, New: func(vaultclient.Config) (ServerClient, error) { return &fakeChecker{Vault: euVault}, nil }}}
	contest := func(names ...string) {
		t.Helper()
		var s vaultv1beta1.VaultServer
		if err := w.client.Get(context.Background(), client.ObjectKey{Name: "eu"}, &s); err != nil {
			t.Fatal(err)
		}
		s.Status.ContestedPolicies = names
		if err := w.client.Update(context.Background(), &s); err != nil { // no status subresource here
			t.Fatal(err)
		}
	}
	w.reconcile()
	if role := euVault.Roles[testPolicy]; role.TTL != time.Hour || role.MaxTTL != vaultv1beta1.MaxTokenTTL {
		t.Fatalf("uncontested role: ttl %s, max %s; want 1h and 24h", role.TTL, role.MaxTTL)
	}

	contest(testPolicy)
	w.reconcile()
	if role := euVault.Roles[testPolicy]; role.TTL != vaultv1beta1.ContestedTokenTTL || role.MaxTTL != vaultv1beta1.ContestedTokenTTL {
		t.Fatalf("contested role: ttl %s, max %s; want both %s", role.TTL, role.MaxTTL, vaultv1beta1.ContestedTokenTTL)
	}
	if msg := w.condition(vaultv1beta1.TypeRoleSynced, metav1.ConditionTrue, vaultv1beta1.ReasonSynced); !strings.Contains(msg, "its tokens live at most 5m0s") {
		t.Fatalf("RoleSynced says %q", msg)
	}
	// Not drift: the Event says why the role was written.
	if note := w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonUpdated); !strings.Contains(note, "tokens that live at most 5m0s") {
		t.Fatalf("the Event of the bounded role says %q", note)
	}

	contest()
	w.reconcile()
	if role := euVault.Roles[testPolicy]; role.TTL != time.Hour || role.MaxTTL != vaultv1beta1.MaxTokenTTL {
		t.Fatalf("no longer contested: ttl %s, max %s; want 1h and 24h back", role.TTL, role.MaxTTL)
	}
	if note := w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonUpdated); !strings.Contains(note, "the spec's token TTLs again") {
		t.Fatalf("the Event of the restored role says %q", note)
	}

	contest(testPolicy)
	w.reconcile()
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if note := w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonDeleted); !strings.Contains(note, "a VaultApp of another cluster asks for policy "+testPolicy) || !strings.Contains(note, "at most 5m0s") {
		t.Fatalf("the deletion's Event says %q", note)
	}
}

// A policy another cluster retained (deletionPolicy Retain) is nobody's to
// take or remove: NotOwned, not a name to ask for; this cluster's own role
// beside it goes all the same.
func TestAPolicyAnotherClusterRetainedIsNotAskedFor(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	owner := vaultclient.Owner{Namespace: "shop", Name: "api", UID: "9", Cluster: "west"}
	w.vault.Policies[testPolicy] = vaultclient.RetainedText(marked("west", "9"), owner)
	w.reconcile()
	if msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotOwned); !strings.Contains(msg, "was retained by cluster west") {
		t.Fatalf("Ready says %q", msg)
	}
	if len(w.vault.Writes) > 0 {
		t.Fatalf("wrote %v beside a retained policy", w.vault.Writes)
	}
}

// A check that could not read the registrations keeps the list it had (the
// tokens stay short); one that read them says what they hold now.
func TestAContestedListIsKeptUntilTheRegistrationsAreRead(t *testing.T) {
	s := centralVault()
	s.Status.ContestedPolicies = []string{testPolicy}
	refused := &registrationOutcome{registered: verdict{false, vaultv1beta1.ReasonOperatorForbidden, "refused"}}
	if st, _ := decideServerStatus(s, serverCheckOutcome{registration: refused}); !slices.Equal(st.ContestedPolicies, []string{testPolicy}) {
		t.Fatalf("a refused read left %v", st.ContestedPolicies)
	}
	none := []string{}
	read := &registrationOutcome{registered: verdict{true, vaultv1beta1.ReasonRegistered, "ok"}, contested: &none}
	if st, _ := decideServerStatus(s, serverCheckOutcome{registration: read}); len(st.ContestedPolicies) > 0 {
		t.Fatalf("a read that found no request left %v", st.ContestedPolicies)
	}
}

// A VaultApp turning HeldByAnotherCluster, or no longer, queues its
// server's check (which writes the request); other changes do not.
func TestAContestChangeQueuesTheServersCheck(t *testing.T) {
	app := func(reason string) *vaultv1beta1.VaultApp {
		a := &vaultv1beta1.VaultApp{Status: vaultv1beta1.VaultAppStatus{Server: "shared"}}
		if reason != "" {
			meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: vaultv1beta1.TypePolicySynced, Status: metav1.ConditionFalse, Reason: reason})
		}
		return a
	}
	for name, c := range map[string]struct {
		before, after string
		want          bool
	}{
		"turns held by another cluster":    {"", vaultv1beta1.ReasonHeldByAnotherCluster, true},
		"synced, then held by another":     {vaultv1beta1.ReasonSynced, vaultv1beta1.ReasonHeldByAnotherCluster, true},
		"takes the name":                   {vaultv1beta1.ReasonHeldByAnotherCluster, vaultv1beta1.ReasonSynced, true},
		"still held by another":            {vaultv1beta1.ReasonHeldByAnotherCluster, vaultv1beta1.ReasonHeldByAnotherCluster, false},
		"a hand-written policy in the way": {vaultv1beta1.ReasonSynced, vaultv1beta1.ReasonNotOwned, false},
		"first sync":                       {"", vaultv1beta1.ReasonSynced, false},
	} {
		if got := wantsChanged.Update(event.UpdateEvent{ObjectOld: app(c.before), ObjectNew: app(c.after)}); got != c.want {
			t.Errorf("%s: queues the check %v, want %v", name, got, c.want)
		}
	}
	if !wantsChanged.Delete(event.DeleteEvent{Object: app(vaultv1beta1.ReasonHeldByAnotherCluster)}) || wantsChanged.Delete(event.DeleteEvent{Object: app(vaultv1beta1.ReasonSynced)}) {
		t.Error("a VaultApp held by another cluster that goes must queue the check (its request ends), and only such a one")
	}
	// The queued pass checks in full, though the last check is recent.
	server := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "shared", Generation: 1}}
	server.Status.ObservedGeneration = 1
	meta.SetStatusCondition(&server.Status.Conditions, metav1.Condition{Type: vaultv1beta1.TypeConnected, Status: metav1.ConditionTrue, Reason: "Connected"})
	r := &VaultServerReconciler{}
	r.noteCheck(server, nil)
	if !r.checkedLately(server, &server.Status) {
		t.Fatal("a server just checked is not counted as checked lately: the test proves nothing")
	}
	if reqs := r.checkAgain(context.Background(), app(vaultv1beta1.ReasonHeldByAnotherCluster)); len(reqs) != 1 || reqs[0].Name != "shared" {
		t.Errorf("queued %v, want the VaultServer shared", reqs)
	}
	// Within minRecheck of the last check it waits, and comes back then.
	if !r.checkedLately(server, &server.Status) {
		t.Error("a contest change right after a check made a full check at once: a tenant's churn would write the registration at its pace")
	}
	if wait, asked := r.recheckIn("shared"); !asked || wait > minRecheck {
		t.Errorf("the full check asked for comes back in %s (asked %v), want within %s", wait, asked, minRecheck)
	}
	r.checked["shared"] = serverCheck{generation: 1, at: time.Now().Add(-minRecheck - time.Second)}
	if r.checkedLately(server, &server.Status) {
		t.Error("the pass a contest change queues would only recount: the registration would not say what this cluster asks for")
	}
}
