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

package conversiontest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// SeedSamples adds the JSON of every sample in config/samples whose file
// name holds group and version (e.g. "vault_v1alpha1") to the fuzz corpus.
func SeedSamples(f *testing.F, nameHolds string) {
	f.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "config", "samples")
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	seeded := 0
	for _, e := range entries {
		if !strings.Contains(e.Name(), nameHolds) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
		seeded++
	}
	if seeded == 0 {
		f.Fatalf("no sample in %s holds %q", dir, nameHolds)
	}
}

// FuzzSpoke is the body of a conversion fuzz target: data, read as a spoke
// object, is either refused by the conversion with a field error, or goes
// spoke → hub → spoke and hub → spoke → hub unchanged. annotation is the
// group's conversion-data key: a spoke may carry one the round trip finds
// redundant and drops, which loses nothing.
func FuzzSpoke[H Hub, S Spoke](t *testing.T, data []byte, newHub func() H, newSpoke func() S, annotation string) {
	in := newSpoke()
	if json.Unmarshal(data, in) != nil {
		return
	}
	// apiVersion and kind are the caller's to set, not the conversion's.
	in.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	hub := newHub()
	if err := in.ConvertTo(hub); err != nil {
		if !isFieldError(err) {
			t.Fatalf("conversion refused with something other than a field error: %v", err)
		}
		return
	}
	out := newSpoke()
	if err := out.ConvertFrom(hub); err != nil {
		t.Fatalf("convert hub to spoke: %v", err)
	}
	withoutKey(in, annotation)
	withoutKey(out, annotation)
	if !equality.Semantic.DeepEqual(in, out) {
		t.Fatalf("spoke changed in a round trip through the hub:\n%s", diff.Diff(in, out))
	}
	again := newHub()
	if err := out.ConvertTo(again); err != nil {
		t.Fatalf("convert spoke to hub again: %v", err)
	}
	if !equality.Semantic.DeepEqual(hub, again) {
		t.Fatalf("hub changed in a round trip through the spoke:\n%s", diff.Diff(hub, again))
	}
}

func isFieldError(err error) bool {
	var fe *field.Error
	return errors.As(err, &fe)
}

func withoutKey(o interface {
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}, key string) {
	a := o.GetAnnotations()
	if _, ok := a[key]; !ok {
		return
	}
	delete(a, key)
	if len(a) == 0 {
		a = nil
	}
	o.SetAnnotations(a)
}

// HubRoundTrip asserts that hub → spoke → hub gives hub back: what an
// admission fuzz target checks of every object the webhooks admit.
func HubRoundTrip[H Hub, S Spoke](t *testing.T, in H, newHub func() H, newSpoke func() S) {
	t.Helper()
	in.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	spoke := newSpoke()
	if err := spoke.ConvertFrom(in); err != nil {
		t.Fatalf("an admitted object does not convert to the spoke: %v", err)
	}
	out := newHub()
	if err := spoke.ConvertTo(out); err != nil {
		t.Fatalf("convert spoke to hub: %v", err)
	}
	if !equality.Semantic.DeepEqual(in, out) {
		t.Fatalf("an admitted object changed in a round trip through the spoke:\n%s", diff.Diff(in, out))
	}
}

// RefusedWithFieldErrors fails t unless err is the API's Invalid answer
// naming at least one field: what a validating webhook must give for any
// input it refuses (never a panic, never an internal error).
func RefusedWithFieldErrors(t *testing.T, err error) {
	t.Helper()
	var status *apierrors.StatusError
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.ErrStatus.Details == nil || len(status.ErrStatus.Details.Causes) == 0 {
		t.Fatalf("refused without field errors: %v", err)
	}
}
