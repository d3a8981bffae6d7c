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

// An entry stays a day: long enough for every shard to see it, and the
// ConfigMap does not grow with every rotation ever made.
func TestWithRotationDropsEntriesOfPastDays(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	data := map[string]string{
		rotatedKey("apps", "old"):    rotationEntry("apps", "old", t0.Add(-25*time.Hour)),
		rotatedKey("apps", "recent"): rotationEntry("apps", "recent", t0.Add(-time.Hour)),
	}
	got := withRotation(data, rotated{Realm: "apps", ClientID: "web", At: t0})
	if _, ok := got[rotatedKey("apps", "old")]; ok || len(got) != 2 || got[rotatedKey("apps", "recent")] == "" {
		t.Fatalf("entries %v: want recent and web", got)
	}
	if len(data) != 2 {
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
	w.r.Rotations = &RotationSignal{Client: w.client, Namespace: "vko-system"}
	// Another process, on the same API server and Keycloak.
	other := &KeycloakClientCredentialReconciler{Client: w.r.Client, Reader: w.r.Reader, Clients: w.r.Clients, Recorder: w.events,
		Rotations: &RotationSignal{Client: w.client, Namespace: "vko-system"}}
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
		kept := l.Items[:0]
		for _, k := range l.Items {
			if k.Namespace == "team-a" {
				kept = append(kept, k)
			}
		}
		l.Items = kept
	}
	return nil
}

// Where the cache holds the shard's namespaces alone, a rotation looks for
// another of its client in every namespace, on the API server: one under
// way in team-b (another shard's) makes it wait. Read from the split cache
// alone (the control), it would regenerate at once.
func TestASplitCacheLooksForAnotherRotationOnTheAPIServer(t *testing.T) {
	for _, split := range []bool{true, false} {
		started := metav1.Now()
		elsewhere := rotating(time.Hour)
		elsewhere.Namespace, elsewhere.UID = "team-b", "uid-elsewhere"
		elsewhere.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: secretsv1beta1.RotationGracePeriod, Server: "kc", Realm: "apps",
			ClientID: "team-a-rot", StartedTime: &started, WithGrace: true}
		mine := rotating(time.Hour)
		mine.UID = "uid-mine"
		w := newKCCWorld(t, mine, elsewhere)
		w.r.Client, w.r.SplitCache = rangeOnly{w.r.Client}, split
		w.reconcile("rot")
		w.request("rot", secretsv1beta1.RotationRequestAnnotation, "r1")
		w.reconcile("rot")
		c := meta.FindStatusCondition(w.status("rot").Conditions, secretsv1beta1.TypeRotationReady)
		switch {
		case split && (w.calls("regenerate ") != 0 || c == nil || c.Reason != secretsv1beta1.ReasonRotationWaiting):
			t.Errorf("split cache: %d regenerations, RotationReady %+v; want it to wait for team-b's", w.calls("regenerate "), c)
		case !split && w.calls("regenerate ") != 1:
			t.Errorf("the control: %d regenerations, want 1 (the split cache alone does not see team-b's)", w.calls("regenerate "))
		}
	}
}
