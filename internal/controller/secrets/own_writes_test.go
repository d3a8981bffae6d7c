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
