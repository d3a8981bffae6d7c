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

package secrets

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func rotationEntry(realm, clientID string, at time.Time) string {
	b, _ := json.Marshal(rotated{Realm: realm, ClientID: clientID, At: at})
	return string(b)
}

func TestChangedRotations(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	web, api := rotatedKey("apps", "web"), rotatedKey("apps", "api")
	for _, tc := range []struct {
		name        string
		before, now map[string]string
		want        []string
	}{
		{"a first entry", nil, map[string]string{web: rotationEntry("apps", "web", t0)}, []string{"web"}},
		{"nothing new", map[string]string{web: rotationEntry("apps", "web", t0)}, map[string]string{web: rotationEntry("apps", "web", t0)}, nil},
		{"rotated again", map[string]string{web: rotationEntry("apps", "web", t0)}, map[string]string{web: rotationEntry("apps", "web", t0.Add(time.Hour))}, []string{"web"}},
		{"another client beside", map[string]string{web: rotationEntry("apps", "web", t0)},
			map[string]string{web: rotationEntry("apps", "web", t0), api: rotationEntry("apps", "api", t0)}, []string{"api"}},
		{"an entry dropped", map[string]string{web: rotationEntry("apps", "web", t0), api: rotationEntry("apps", "api", t0)},
			map[string]string{web: rotationEntry("apps", "web", t0)}, nil},
		{"an admin's edit that does not parse", nil, map[string]string{web: "{", api: `{"realm":"apps"}`}, nil},
		{"a claim alone", map[string]string{web: rotationEntry("apps", "web", t0)},
			map[string]string{web: `{"realm":"apps","clientId":"web","at":"` + t0.Format(time.RFC3339) + `","holder":"team-a/rot","holderUID":"u1"}`}, nil},
		{"a first claim, never rotated", nil, map[string]string{web: `{"realm":"apps","clientId":"web","holder":"team-a/rot"}`}, nil},
	} {
		var got []string
		for _, r := range changedRotations(tc.before, tc.now) {
			got = append(got, r.ClientID)
		}
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: changed %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An entry stays a day after its regeneration, long enough for every
// shard to see it, and the ConfigMap does not grow with every rotation
// ever made; a claimed one stays while claimed.
func TestWithEntryDropsEntriesOfPastDays(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	claimed, _ := json.Marshal(rotated{Realm: "apps", ClientID: "long", At: t0.Add(-48 * time.Hour), Holder: "team-a/rot", HolderUID: "u1"})
	data := map[string]string{
		rotatedKey("apps", "old"):    rotationEntry("apps", "old", t0.Add(-25*time.Hour)),
		rotatedKey("apps", "recent"): rotationEntry("apps", "recent", t0.Add(-time.Hour)),
		rotatedKey("apps", "long"):   string(claimed),
	}
	got := withEntry(data, rotated{Realm: "apps", ClientID: "web", At: t0}, t0)
	if _, ok := got[rotatedKey("apps", "old")]; ok || len(got) != 3 || got[rotatedKey("apps", "recent")] == "" || got[rotatedKey("apps", "long")] == "" {
		t.Fatalf("entries %v: want recent, long (claimed) and web", got)
	}
	if len(data) != 3 {
		t.Fatal("the ConfigMap's data read was changed in place")
	}
}

// With --shards, a client's readers sit in other processes than the one
// that rotates it: the rotation written to the ConfigMap wakes them, and a
// repair then writes the new secret, not the one remembered before.
func TestARotationWakesTheReadersOfAnotherShard(t *testing.T) {
	ctx := context.Background()
	rot := teamA("rot", "team-a-rot")
	rot.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
	rot.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
	w := newKCCWorld(t, rot, teamA("reader", "team-a-rot"))
	w.r.Rotations = &RotationSignal{Client: w.client, Reader: w.client, Namespace: "vko-system"}
	// Another process, on the same API server and Keycloak.
	other := &KeycloakClientCredentialReconciler{Client: w.r.Client, Reader: w.r.Reader, Clients: w.r.Clients, Recorder: w.events,
		Rotations: &RotationSignal{Client: w.client, Reader: w.client, Namespace: "vko-system"}}
	readerKey := client.ObjectKey{Namespace: "team-a", Name: "reader"}
	if _, err := other.Reconcile(ctx, ctrl.Request{NamespacedName: readerKey}); err != nil {
		t.Fatal(err)
	}
	w.reconcile("rot") // regenerates: "r0t-rotated"
	if w.calls("regenerate ") != 1 {
		t.Fatalf("%d regenerations, want 1", w.calls("regenerate "))
	}
	var cm corev1.ConfigMap
	if err := w.client.Get(ctx, client.ObjectKey{Namespace: "vko-system", Name: RotationsName("kc")}, &cm); err != nil {
		t.Fatal(err)
	}
	if !RotationsConfigMaps().Matches(labels.Set(cm.Labels)) || cm.Annotations[RotationsServerAnnotation] != "kc" {
		t.Fatalf("ConfigMap %s: labels %v, annotations %v", cm.Name, cm.Labels, cm.Annotations)
	}
	queued := func(r *KeycloakClientCredentialReconciler) []reconcile.Request {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		r.Rotations.changed(ctx, &cm, nil, r.wakeReaders, q)
		var out []reconcile.Request
		for q.Len() > 0 {
			item, _ := q.Get()
			out = append(out, item)
		}
		return out
	}
	if got := queued(w.r); len(got) != 0 {
		t.Errorf("the rotating process queued %v from its own entry: it woke its readers already", got)
	}
	// Every reader of the client it holds (the rotating one is another
	// shard's in a cluster: its Filter drops it).
	if got := queued(other); !slices.Contains(got, reconcile.Request{NamespacedName: readerKey}) {
		t.Fatalf("the other process queued %v, want its reader %s", got, readerKey)
	}
	s := w.secret("team-a", "reader-creds")
	s.Data["secret"] = []byte("edited by hand")
	if err := w.client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Reconcile(ctx, ctrl.Request{NamespacedName: readerKey}); err != nil {
		t.Fatal(err)
	}
	if got := string(w.secret("team-a", "reader-creds").Data["secret"]); got != "r0t-rotated" {
		t.Fatalf("the other process's repair wrote %q, want the rotated secret", got)
	}
	for _, e := range w.drainEvents() {
		if strings.Contains(e, "r0t") {
			t.Errorf("an Event holds a secret: %s", e)
		}
	}
	for k, v := range cm.Data {
		if strings.Contains(k+v, "r0t") {
			t.Errorf("the ConfigMap holds a secret: %s=%s", k, v)
		}
	}
}

// rangeOnly is a split cache: it lists the credentials of team-a alone.
type rangeOnly struct{ client.Client }

func (c rangeOnly) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if l, ok := list.(*secretsv1beta1.KeycloakClientCredentialList); ok {
		l.Items = slices.DeleteFunc(l.Items, func(k secretsv1beta1.KeycloakClientCredential) bool { return k.Namespace != "team-a" })
	}
	return nil
}

// Two shards, each seeing its own range: a rotation under way in team-b
// (the other shard's) holds the client's claim, so team-a's request waits
// without a regeneration, and without reading every credential; once
// team-b's rotation is over, team-a's goes ahead. Without the claim (the
// control: one process's cache check) team-a would regenerate at once.
func TestAClaimKeepsASecondRotationOfTheClientAcrossShards(t *testing.T) {
	ctx := context.Background()
	for _, claimed := range []bool{true, false} {
		started := metav1.Now()
		elsewhere := rotating(time.Hour)
		elsewhere.Namespace, elsewhere.UID = "team-b", "uid-elsewhere"
		elsewhere.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: secretsv1beta1.RotationGracePeriod, Server: "kc", Realm: "apps",
			ClientID: "team-a-rot", StartedTime: &started, WithGrace: true}
		mine := rotating(time.Hour)
		mine.UID = "uid-mine"
		w := newKCCWorld(t, mine, elsewhere)
		w.r.Client = rangeOnly{w.r.Client}
		var lists int
		if claimed {
			w.r.Rotations = &RotationSignal{Client: w.client, Reader: countingLists{w.client, &lists}, Namespace: "vko-system"}
			// team-b's shard claimed the client when its rotation began.
			if other, err := w.r.Rotations.claim(ctx, testServer(), elsewhere); err != nil || other != "" {
				t.Fatalf("team-b's claim: %q, %v", other, err)
			}
		}
		w.reconcile("rot")
		w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
		w.reconcile("rot")
		c := meta.FindStatusCondition(w.status("rot").Conditions, secretsv1beta1.TypeRotationReady)
		if !claimed {
			if w.calls("regenerate ") != 1 {
				t.Errorf("the control: %d regenerations, want 1 (the range's cache does not see team-b's)", w.calls("regenerate "))
			}
			continue
		}
		if w.calls("regenerate ") != 0 || c == nil || c.Reason != secretsv1beta1.ReasonRotationWaiting || !strings.Contains(c.Message, "team-b/rot") {
			t.Fatalf("%d regenerations, RotationReady %+v; want it to wait for team-b/rot's", w.calls("regenerate "), c)
		}
		if lists != 0 {
			t.Errorf("the claim's check listed %d times, want reads alone", lists)
		}
		// team-b's rotation is over: the claim is free.
		var done secretsv1beta1.KeycloakClientCredential
		if err := w.client.Get(ctx, client.ObjectKeyFromObject(elsewhere), &done); err != nil {
			t.Fatal(err)
		}
		done.Status.Rotation.Phase = secretsv1beta1.RotationCompleted
		if err := w.client.Status().Update(ctx, &done); err != nil {
			t.Fatal(err)
		}
		w.r.Now = func() time.Time { return time.Now().Add(time.Minute) }
		// Its start was recorded before the claim in this test: the claim
		// is free once it has held claimRecorded.
		w.r.Rotations.Now = func() time.Time { return time.Now().Add(claimRecorded + time.Minute) }
		w.reconcile("rot")
		if w.calls("regenerate ") != 1 {
			t.Fatalf("%d regenerations after team-b's rotation ended, want 1", w.calls("regenerate "))
		}
		var cm corev1.ConfigMap
		if err := w.client.Get(ctx, client.ObjectKey{Namespace: "vko-system", Name: RotationsName("kc")}, &cm); err != nil {
			t.Fatal(err)
		}
		entry, _ := parseRotated(cm.Data[rotatedKey("apps", "team-a-rot")])
		if entry.Holder != "team-a/rot" || entry.At.IsZero() {
			t.Errorf("the client's entry %+v: want held by team-a/rot, with its regeneration's time", entry)
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Name != "kc" {
			t.Errorf("ConfigMap owners %+v: want KeycloakServer kc", cm.OwnerReferences)
		}
	}
}

// A claim made but not recorded yet (its holder is between the claim and
// its Regenerating record) holds for claimRecorded; a holder gone, or
// rotating another client, frees it.
func TestAClaimHoldsWhileItsHolderRotates(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	holder := rotating(time.Hour)
	holder.UID = "uid-holder"
	second := rotating(time.Hour)
	second.Name, second.UID = "rot2", "uid-rot2"
	w := newKCCWorld(t, holder, second)
	s := &RotationSignal{Client: w.client, Reader: w.client, Namespace: "vko-system", Now: func() time.Time { return t0 }}
	if other, err := s.claim(ctx, testServer(), holder); err != nil || other != "" {
		t.Fatalf("first claim: %q, %v", other, err)
	}
	if other, _ := s.claim(ctx, testServer(), second); other != "team-a/rot" {
		t.Fatalf("a claim just made, not recorded yet: the second got %q, want team-a/rot", other)
	}
	s.Now = func() time.Time { return t0.Add(claimRecorded + time.Second) }
	if other, _ := s.claim(ctx, testServer(), second); other != "" {
		t.Fatalf("a claim never recorded, past %s: the second got %q, want the claim", claimRecorded, other)
	}
	if err := s.release(ctx, testServer(), "apps", "team-a-rot", holder.UID); err != nil {
		t.Fatal(err)
	}
	if other, _ := s.claim(ctx, testServer(), holder); other != "team-a/rot2" {
		t.Fatalf("a release by another than the holder took the claim away: %q", other)
	}
	// rot2 records its rotation after its claim, then completes it: the
	// claim is free at once.
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(ctx, client.ObjectKeyFromObject(second), &k); err != nil {
		t.Fatal(err)
	}
	after := metav1.NewTime(s.now())
	k.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: secretsv1beta1.RotationCompleted, Server: "kc", Realm: "apps", ClientID: "team-a-rot", StartedTime: &after}
	if err := w.client.Status().Update(ctx, &k); err != nil {
		t.Fatal(err)
	}
	if other, _ := s.claim(ctx, testServer(), holder); other != "" {
		t.Fatalf("rot2's rotation over: the claim went to %q, want to team-a/rot", other)
	}
}

// countingLists counts the lists read through it.
type countingLists struct {
	client.Reader
	n *int
}

func (c countingLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	*c.n++
	return c.Reader.List(ctx, list, opts...)
}
