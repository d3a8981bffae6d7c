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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestOnlyTheEchoesOfItsOwnLastWritesAreDropped(t *testing.T) {
	at := func(rv string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gitea", Name: "creds", ResourceVersion: rv}}
	}
	var w ownWrites
	w.wroteVersion("gitea", "creds", "10") // a removal
	w.wroteVersion("gitea", "creds", "11") // the apply after it
	if w.isEcho(at("9")) {
		t.Fatal("someone else's write dropped")
	}
	if !w.isEcho(at("10")) || !w.isEcho(at("11")) {
		t.Fatal("the echo of a removal or of the apply after it queued a pass")
	}
	if w.isEcho(at("11")) {
		t.Fatal("an echo is dropped only once")
	}
	for _, rv := range []string{"20", "21", "22"} {
		w.wroteVersion("gitea", "creds", rv)
	}
	if w.isEcho(at("20")) || !w.isEcho(at("22")) {
		t.Fatal("more than the last two writes remembered")
	}
	// An apply that changed nothing returns the version the removal left.
	w.wroteVersion("gitea", "creds", "25")
	w.wroteVersion("gitea", "creds", "25")
	if !w.isEcho(at("25")) || w.isEcho(at("25")) {
		t.Fatal("one write recorded twice")
	}
	w.wroteVersion("gitea", "creds", "30")
	w.forget("gitea", "creds")
	if w.isEcho(at("30")) {
		t.Fatal("a deleted Secret's writes kept")
	}
}

// A create's watch event can come before its response: whichever comes
// first, the echo of the operator's own create queues no pass, and nothing
// else is taken for it.
func TestTheEchoOfACreateIsDroppedWhicheverComesFirst(t *testing.T) {
	at := func(rv string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "gitea", Name: "creds", ResourceVersion: rv}}
	}
	type step struct {
		do   string // "create", "event", "update", "done", "failed"
		rv   string
		want bool // for an event: taken for an echo; for done: another version seen
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the echo after the response", []step{
			{do: "create"}, {do: "done", rv: "5"}, {do: "event", rv: "5", want: true}, {do: "event", rv: "5", want: false},
		}},
		{"the echo before the response", []step{
			{do: "create"}, {do: "event", rv: "5", want: true}, {do: "done", rv: "5"},
			{do: "event", rv: "5", want: false}, {do: "update", rv: "6", want: false},
		}},
		{"someone else's Secret in the way: the pass reads it itself", []step{
			{do: "create"}, {do: "event", rv: "7", want: true}, {do: "failed"},
			{do: "update", rv: "8", want: false}, {do: "event", rv: "9", want: false},
		}},
		{"two resources create one name: one wins, its echo is dropped once", []step{
			{do: "create"}, {do: "create"}, {do: "event", rv: "5", want: true}, {do: "failed"}, {do: "done", rv: "5"},
			{do: "event", rv: "5", want: false}, {do: "update", rv: "5", want: false},
		}},
		{"two resources create one name: the winner answers before its echo", []step{
			{do: "create"}, {do: "create"}, {do: "done", rv: "5"}, {do: "event", rv: "5", want: true}, {do: "failed"},
			{do: "update", rv: "5", want: false},
		}},
		{"a relist shows a later version before the answer: the pass reads again", []step{
			{do: "create"}, {do: "event", rv: "6", want: true}, {do: "done", rv: "5", want: true},
			{do: "update", rv: "7", want: false},
		}},
		{"no create under way", []step{
			{do: "event", rv: "9", want: false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w ownWrites
			var pending []func(created client.Object) bool
			pop := func() func(client.Object) bool {
				d := pending[len(pending)-1]
				pending = pending[:len(pending)-1]
				return d
			}
			for i, s := range tc.steps {
				switch s.do {
				case "create":
					pending = append(pending, w.creating("gitea", "creds"))
				case "done":
					d := pop()
					if got := d(at(s.rv)); got != s.want {
						t.Fatalf("step %d: the create of version %s saw another version: %v, want %v", i, s.rv, got, s.want)
					}
					if d(nil) {
						t.Fatalf("step %d: done called again did something", i)
					}
				case "failed":
					pop()(nil)
				case "event":
					if got := w.isCreateEcho(at(s.rv)); got != s.want {
						t.Fatalf("step %d: the create event of version %s taken for an echo: %v, want %v", i, s.rv, got, s.want)
					}
				case "update":
					if got := w.isEcho(at(s.rv)); got != s.want {
						t.Fatalf("step %d: the update event of version %s taken for an echo: %v, want %v", i, s.rv, got, s.want)
					}
				}
			}
			if len(w.creates) != 0 {
				t.Errorf("creates still marked under way: %v", w.creates)
			}
		})
	}
}
