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

package lossless

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wide has a field narrow cannot hold.
type wide struct {
	Name  string
	Extra string
}

type narrow struct{ Name string }

func toNarrow(w wide) narrow   { return narrow{Name: w.Name} }
func fromNarrow(n narrow) wide { return wide{Name: n.Name} }

const key = "example.com/conversion-data"

func TestConvert(t *testing.T) {
	t.Run("nothing lost: no annotation, others kept", func(t *testing.T) {
		src := &metav1.ObjectMeta{Annotations: map[string]string{"team": "a"}}
		dst := &metav1.ObjectMeta{}
		got, err := Convert(key, src, dst, wide{Name: "x"}, toNarrow, fromNarrow)
		if err != nil || got != (narrow{Name: "x"}) {
			t.Fatalf("got %v, %v", got, err)
		}
		if _, saved := dst.Annotations[key]; saved || dst.Annotations["team"] != "a" {
			t.Fatalf("annotations = %v", dst.Annotations)
		}
	})

	t.Run("a round trip through the narrow version restores what it lacks", func(t *testing.T) {
		hub := &metav1.ObjectMeta{}
		spoke := &metav1.ObjectMeta{}
		n, _ := Convert(key, hub, spoke, wide{Name: "x", Extra: "kept"}, toNarrow, fromNarrow)
		if !strings.Contains(spoke.Annotations[key], `"Extra":"kept"`) {
			t.Fatalf("saved = %q", spoke.Annotations[key])
		}
		back := &metav1.ObjectMeta{}
		w, _ := Convert(key, spoke, back, n, fromNarrow, toNarrow)
		if w != (wide{Name: "x", Extra: "kept"}) {
			t.Fatalf("round trip = %+v", w)
		}
		if _, saved := back.Annotations[key]; saved {
			t.Fatal("the annotation survived onto the restored object")
		}
	})

	t.Run("an edit made through the narrow version wins over stale saved data", func(t *testing.T) {
		spoke := &metav1.ObjectMeta{Annotations: map[string]string{key: `{"Name":"x","Extra":"kept"}`}}
		w, _ := Convert(key, spoke, &metav1.ObjectMeta{}, narrow{Name: "renamed"}, fromNarrow, toNarrow)
		if w != (wide{Name: "renamed"}) {
			t.Fatalf("got %+v: the stale Extra came back", w)
		}
	})

	t.Run("saved data that no longer parses is ignored", func(t *testing.T) {
		spoke := &metav1.ObjectMeta{Annotations: map[string]string{key: `{not json`}}
		w, err := Convert(key, spoke, &metav1.ObjectMeta{}, narrow{Name: "x"}, fromNarrow, toNarrow)
		if err != nil || w != (wide{Name: "x"}) {
			t.Fatalf("got %+v, %v", w, err)
		}
	})

	t.Run("saved data that would not fit the API server's bound is not saved", func(t *testing.T) {
		full := strings.Repeat("x", 256*1024-len("team")-10)
		hub := &metav1.ObjectMeta{Annotations: map[string]string{"team": full}}
		spoke := &metav1.ObjectMeta{}
		if _, err := Convert(key, hub, spoke, wide{Name: "x", Extra: "lost"}, toNarrow, fromNarrow); err != nil {
			t.Fatal(err)
		}
		if _, saved := spoke.Annotations[key]; saved || size(spoke.Annotations) > 256*1024 {
			t.Fatalf("the view's annotations take %d bytes", size(spoke.Annotations))
		}
	})
}
