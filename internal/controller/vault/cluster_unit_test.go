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
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Several clusters' operators write to one Vault: each judges a policy by
// the cluster its mark names.

// kubeSystemUID stands for the default identity of the test cluster, kept
// as an alias once the admin named it.
const kubeSystemUID = "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

func marked(cluster, uid string) string {
	return vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: uid, Cluster: cluster}, nil)
}

// namesakes is a policy of this cluster's name written by another cluster
// given the same name (another kube-system UID).
func namesakes(uid string) string {
	return vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: uid, Cluster: testCluster, ClusterID: "another-kube-system-uid"}, nil)
}

func TestOwnsPolicyByCluster(t *testing.T) {
	id := Identity{Cluster: testCluster, ID: kubeSystemUID, Aliases: []string{kubeSystemUID}}
	synced := &vaultv1beta1.VaultAppStatus{PolicyName: testPolicy, Conditions: []metav1.Condition{{Type: vaultv1beta1.TypePolicySynced, Status: metav1.ConditionTrue}}}
	// In step under a former name (app.shop.api before the cluster took
	// the prefix east): says nothing of what holds the new name.
	syncedBefore := &vaultv1beta1.VaultAppStatus{PolicyName: "app-old.shop.api", Conditions: synced.Conditions}
	other := vaultclient.Owner{Namespace: "shop", Name: "api", UID: "9", Cluster: "west"}
	tests := []struct {
		name   string
		text   string
		status *vaultv1beta1.VaultAppStatus
		// want is "" when the policy is the VaultApp's, else what the
		// refusal says.
		want string
	}{
		{"this cluster's", marked(testCluster, "1111-2222"), nil, ""},
		{"this cluster's, of an earlier VaultApp of the name", marked(testCluster, "old"), nil, ""},
		{"this cluster's by its kube-system UID, before the admin named it", marked(kubeSystemUID, "1111-2222"), nil, ""},
		{"an earlier release's (no cluster): adopted", marked("", "1111-2222"), nil, ""},
		{"0.1's (no UID, no cluster): adopted", "# Managed by vault-keycloak-operator for VaultApp shop/api.\n", nil, ""},
		{"another cluster's", marked("west", "9"), nil, "policy app.shop.api in Vault belongs to cluster west (its operator wrote it for VaultApp shop/api there)"},
		{"this cluster's, its ID in the mark", vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: "1", Cluster: testCluster, ClusterID: kubeSystemUID}, nil), nil, ""},
		{"a namesake cluster's", namesakes("9"), nil, "belongs to another cluster given this cluster's name (id another-kube-system-uid"},
		{"this cluster's under the name it had before a rename", vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "api", UID: "1", Cluster: "twin", ClusterID: kubeSystemUID}, nil), nil, ""},
		{"a namesake cluster's, though this VaultApp had it in step once", namesakes("9"), synced, "belongs to another cluster given this cluster's name"},
		{"another cluster's, though this VaultApp had it in step once", marked("west", "9"), synced, "belongs to cluster west"},
		{"retained by another cluster", vaultclient.RetainedText(marked("west", "9"), other), synced, "was retained by cluster west"},
		{"another VaultApp's of this cluster", vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "web", UID: "3", Cluster: testCluster}, nil), nil,
			"the operator wrote it for VaultApp shop/web"},
		{"unmarked, in step before (a hand edit)", `path "x" {}`, synced, ""},
		{"unmarked", `path "x" {}`, nil, "its first line carries no mark of the operator"},
		{"unmarked, in step under a former name", `path "x" {}`, syncedBefore, "its first line carries no mark of the operator"},
		{"another VaultApp's, though this one had its name in step", vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "web", UID: "3", Cluster: testCluster}, nil), synced,
			"the operator wrote it for VaultApp shop/web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := tt.status
			if status == nil {
				status = &vaultv1beta1.VaultAppStatus{}
			}
			got := ownsPolicy(id, shopAPI(), status, testPolicy, tt.text)
			switch {
			case tt.want == "" && got != nil:
				t.Fatalf("refused: %v", got)
			case tt.want != "" && got == nil:
				t.Fatalf("taken as the VaultApp's; want %q", tt.want)
			case tt.want != "" && !strings.Contains(got.Error(), tt.want):
				t.Fatalf("refusal %q\ndoes not say %q", got, tt.want)
			}
		})
	}
}

func TestAnotherClustersPolicyIsLeftAloneAndNamed(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	theirs := marked("west", "9")
	theirRole := vaultclient.Role{Policies: []string{testPolicy}, Namespace: "shop", ServiceAccounts: []string{"api"}}
	w.vault.Policies[testPolicy], w.vault.Roles[testPolicy] = theirs, theirRole
	w.reconcile()
	if len(w.vault.Writes) > 0 {
		t.Fatalf("wrote %v over another cluster's policy", w.vault.Writes)
	}
	msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonHeldByAnotherCluster)
	for _, want := range []string{"belongs to cluster west", "--vault-name-prefix"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("Ready message %q does not say %q", msg, want)
		}
	}
	w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonHeldByAnotherCluster)

	// Neither its deletion nor the sweep touches them.
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	s := &OrphanSweeper{Reader: w.client, Vault: w.vault, Recorder: w.events, Identity: w.r.Identity}
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(w.vault.Writes) > 0 || w.vault.Policies[testPolicy] != theirs {
		t.Fatalf("deletion or sweep wrote %v", w.vault.Writes)
	}
}

func TestEarlierReleasesPolicyIsAdoptedWithThisClustersMark(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.vault.Policies[testPolicy] = marked("", "1111-2222")
	w.vault.Roles[testPolicy] = vaultclient.Role{Policies: []string{testPolicy}, Namespace: "shop", ServiceAccounts: []string{"api"}}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if got := vaultclient.MarkOf(w.vault.Policies[testPolicy]).Owner.Cluster; got != testCluster {
		t.Fatalf("adopted policy marks cluster %q, want %q", got, testCluster)
	}
}

func TestNamingTheClusterAdoptsWhatItsUIDMarked(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.r.Identity = Identity{Cluster: kubeSystemUID}
	w.reconcile()
	w.r.Identity = Identity{Cluster: testCluster, Aliases: []string{kubeSystemUID}}
	w.reconcile()
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if got := vaultclient.MarkOf(w.vault.Policies[testPolicy]).Owner.Cluster; got != testCluster {
		t.Fatalf("mark names cluster %q, want %q", got, testCluster)
	}
}

func TestOrphanSweepTakesOnlyThisClustersMarks(t *testing.T) {
	gone := func(cluster, name, uid string) string {
		return vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "gone", UID: uid, Cluster: cluster}, nil)
	}
	tests := []struct {
		name, policy, text string
		removed            bool
	}{
		{"this cluster's", "app.shop.gone", gone(testCluster, "gone", "3"), true},
		{"this cluster's by its kube-system UID", "app.shop.gone", gone(kubeSystemUID, "gone", "3"), true},
		{"another cluster's", "app.shop.gone", gone("west", "gone", "3"), false},
		{"a namesake cluster's", "app.shop.gone", vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"},
			vaultclient.Owner{Namespace: "shop", Name: "gone", UID: "3", Cluster: testCluster, ClusterID: "another-kube-system-uid"}, nil), false},
		{"another cluster's, prefixed", "app-west.shop.gone", gone("west", "gone", "3"), false},
		{"an earlier release's: maybe another cluster's", "app.shop.gone", gone("", "gone", "3"), false},
		// Not listed: names of another form are not this cluster's to
		// judge (a live VaultApp moves from its former name itself).
		{"this cluster's under a former prefix", "app-old.shop.gone", gone(testCluster, "gone", "3"), false},
		{"a copy of this cluster's text under another name", "app.shop.copy", gone(testCluster, "gone", "3"), false},
		{"a copy under a name no prefix makes", "app.a.b.shop.gone", gone(testCluster, "gone", "3"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, nil, shopAPI())
			w.vault.Policies[tt.policy] = tt.text
			w.vault.Roles[tt.policy] = vaultclient.Role{Policies: []string{tt.policy}}
			s := &OrphanSweeper{Reader: w.client, Vault: w.vault, Recorder: w.events, Identity: Identity{Cluster: testCluster, ID: kubeSystemUID, Aliases: []string{kubeSystemUID}}}
			removed, err := s.Sweep(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(removed, tt.policy); got != tt.removed {
				t.Fatalf("removed %v; want %s removed: %v", removed, tt.policy, tt.removed)
			}
			if _, left := w.vault.Policies[tt.policy]; left == tt.removed {
				t.Fatalf("policy %s still there: %v", tt.policy, left)
			}
		})
	}
}

func TestNamePrefixMovesThePolicyAndRole(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	if got := w.app().Status.PolicyName; got != testPolicy {
		t.Fatalf("status.policyName = %q after the first pass, want %q", got, testPolicy)
	}
	w.r.Identity.NamePrefix = "east"
	// Once while the former name cannot be removed: the status keeps it.
	w.vault.FailDelete = errors.New("permission denied")
	if _, err := w.r.Reconcile(context.Background(), w.request()); err == nil {
		t.Fatal("no error while the former policy could not be removed")
	}
	if got := w.app().Status.PolicyName; got != testPolicy {
		t.Fatalf("status.policyName = %q while the former name is still live, want %q", got, testPolicy)
	}
	w.vault.FailDelete = nil
	w.reconcile()
	const moved = "app-east.shop.api"
	if _, ok := w.vault.Policies[moved]; !ok {
		t.Fatalf("no policy %s; Vault holds %v", moved, w.vault.Policies)
	}
	if got := w.vault.Roles[moved].Policies; !slices.Equal(got, []string{moved}) {
		t.Fatalf("role %s grants %v", moved, got)
	}
	if _, ok := w.vault.Policies[testPolicy]; ok {
		t.Fatal("the policy under the former name is still live")
	}
	if _, ok := w.vault.Roles[testPolicy]; ok {
		t.Fatal("the role under the former name is still live")
	}
	if st := w.app().Status; st.PolicyName != moved || st.RoleName != moved {
		t.Fatalf("status names %q/%q, want %q", st.PolicyName, st.RoleName, moved)
	}
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	if e := w.event(corev1.EventTypeNormal, vaultv1beta1.ReasonRenamed); !strings.Contains(e, "removed policy and role app.shop.api") {
		t.Fatalf("event = %q", e)
	}
}

func TestFormerNameOutOfTheOperatorsReachIsLeftForTheAdmin(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	// The admin confined the operator's Vault policy to app-east.*.
	w.r.Identity.NamePrefix = "east"
	w.vault.Forbidden = map[string]bool{testPolicy: true}
	w.reconcile()
	if got := w.app().Status.PolicyName; got != "app-east.shop.api" {
		t.Fatalf("status.policyName = %q", got)
	}
	if e := w.event(corev1.EventTypeWarning, vaultv1beta1.ReasonRenamed); !strings.Contains(e, "app.shop.api are out of the operator's reach") {
		t.Fatalf("event = %q", e)
	}
	// The sweep, listing only its own prefix, never reads them.
	w.vault.Writes, w.vault.ForbiddenReads = nil, 0
	s := &OrphanSweeper{Reader: w.client, Vault: w.vault, Recorder: w.events, Identity: w.r.Identity}
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if len(w.vault.Writes) > 0 || w.vault.ForbiddenReads > 0 {
		t.Fatalf("sweep wrote %v and read %d names out of reach", w.vault.Writes, w.vault.ForbiddenReads)
	}
}

func TestFormerNameOfAnotherVaultAppIsLeftAlone(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	// The policy under the former name was re-marked for another VaultApp
	// of the name (another UID): not this one's to remove.
	w.vault.Policies[testPolicy] = marked(testCluster, "someone-else")
	w.r.Identity.NamePrefix = "east"
	w.reconcile()
	if w.vault.Policies[testPolicy] == "" {
		t.Fatal("removed a former-name policy marked for another VaultApp")
	}
}

func TestIdentityValidate(t *testing.T) {
	for _, tt := range []struct {
		id Identity
		ok bool
	}{
		{Identity{Cluster: "eu-prod-1"}, true},
		{Identity{Cluster: kubeSystemUID, NamePrefix: "eu1"}, true},
		{Identity{}, false},
		{Identity{Cluster: "EU"}, false},
		{Identity{Cluster: "eu.prod"}, false},
		{Identity{Cluster: "eu", NamePrefix: "a.b"}, false},
		{Identity{Cluster: "eu", NamePrefix: strings.Repeat("a", 21)}, false},
	} {
		if err := tt.id.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok: %v", tt.id, err, tt.ok)
		}
	}
}

// Two clusters without a prefix both wrote shop/api (an earlier release, or
// both at once): the one whose policy was overwritten removes its own role,
// which would hand its workloads the other cluster's policy.
func TestLosingClusterRemovesItsRoleBesideAnotherClustersPolicy(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	w.vault.Policies[testPolicy] = marked("west", "9")
	w.vault.Writes = nil
	w.reconcile()
	if _, ok := w.vault.Roles[testPolicy]; ok {
		t.Fatal("this cluster's role still grants the other cluster's policy")
	}
	if want := []string{vaultclient.OpDeleteRole + " " + testPolicy}; !slices.Equal(w.vault.Writes, want) {
		t.Fatalf("writes = %v, want %v", w.vault.Writes, want)
	}
	msg := w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonHeldByAnotherCluster)
	if !strings.Contains(msg, "belongs to cluster west") || !strings.Contains(msg, "role app.shop.api, which granted it, was removed") {
		t.Fatalf("Ready message = %q", msg)
	}
}

// After a prefix change, the conditions of the former name say nothing of
// what holds the new one: an unmarked policy there is not taken over, and
// the former name is removed all the same.
func TestRenameDoesNotTakeWhatHoldsTheNewName(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	foreign := `path "secret/*" { capabilities = ["read"] }`
	w.vault.Policies["app-east.shop.api"] = foreign
	w.r.Identity.NamePrefix = "east"
	w.reconcile()
	if w.vault.Policies["app-east.shop.api"] != foreign {
		t.Fatal("took over the unmarked policy under the new name")
	}
	w.condition(vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotOwned)
	if _, ok := w.vault.Policies[testPolicy]; ok {
		t.Fatal("the former policy is still live while the VaultApp is NotOwned")
	}
	if got := w.app().Status.PolicyName; got != "app-east.shop.api" {
		t.Fatalf("status.policyName = %q", got)
	}
}

// A VaultApp deleted before its move was done takes its former name along.
func TestDeletionTakesTheFormerNameToo(t *testing.T) {
	w := newWorld(t, nil, shopAPI())
	w.reconcile()
	w.r.Identity.NamePrefix = "east"
	if err := w.client.Delete(context.Background(), w.app()); err != nil {
		t.Fatal(err)
	}
	w.reconcile()
	if len(w.vault.Policies) > 0 || len(w.vault.Roles) > 0 {
		t.Fatalf("left in Vault: %v %v", w.vault.Policies, w.vault.Roles)
	}
}

// A mark of this cluster's name with another ID is another cluster's (left
// alone) unless the admin names that ID a predecessor on the VaultServer
// (a cluster rebuilt under the name adopts what the one before wrote).
// Only marks of this cluster's own ID are ever swept.
func TestPredecessorsPoliciesAreAdoptedOnlyWhenTheAdminSaysSo(t *testing.T) {
	plain := Identity{Cluster: testCluster, ID: kubeSystemUID}
	rebuilt := plain
	rebuilt.Predecessors = []string{"another-kube-system-uid"}
	predecessor := vaultclient.Owner{Namespace: "shop", Name: "api", UID: "9", Cluster: testCluster, ClusterID: "another-kube-system-uid"}
	text := vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, predecessor, nil)
	if got := ownsPolicy(plain, shopAPI(), &vaultv1beta1.VaultAppStatus{}, testPolicy, text); got == nil || !strings.Contains(got.Error(), "another cluster given this cluster's name") {
		t.Fatalf("unnamed: %v; want left alone as a namesake's", got)
	}
	if got := ownsPolicy(rebuilt, shopAPI(), &vaultv1beta1.VaultAppStatus{}, testPolicy, text); got != nil {
		t.Fatalf("named a predecessor: %v; want its policy adopted", got)
	}
	if sweepable(rebuilt, testPolicy, vaultclient.MarkOf(text)) {
		t.Fatal("a predecessor's policy is sweepable: only what this cluster's ID marked is")
	}
	s := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{vaultv1beta1.PredecessorsAnnotation: " a-uid, ,b-uid"}}}
	if got := predecessorsOf(s); !slices.Equal(got, []string{"a-uid", "b-uid"}) {
		t.Fatalf("predecessorsOf = %v", got)
	}
}
