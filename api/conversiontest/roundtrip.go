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

// Package conversiontest checks that conversions between a hub and a spoke
// are lossless, on thousands of random objects, in the manner of
// cluster-api's FuzzTestFunc.
package conversiontest

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"
)

// Iterations is how many random objects each direction is checked with.
const Iterations = 5000

// Hub and Spoke are the two sides of one kind's conversion.
type (
	Hub interface {
		conversion.Hub
		metav1.Object
	}
	Spoke interface {
		conversion.Convertible
		metav1.Object
	}
)

// RoundTrip fills hub and spoke objects at random and asserts that
// hub → spoke → hub and spoke → hub → spoke give back the object it started
// from. newHub and newSpoke return empty objects of the two versions.
// fuzzFuncs (randfill custom functions) narrow a field to the values its
// schema admits, where the conversion refuses the others.
func RoundTrip[H Hub, S Spoke](t *testing.T, newHub func() H, newSpoke func() S, fuzzFuncs ...any) {
	t.Helper()
	filler := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(rand.Int63()), serializer.NewCodecFactory(runtime.NewScheme())) //nolint:gosec // test data
	filler.NilChance(0.2).NumElements(0, 4).Funcs(fuzzFuncs...)

	t.Run("hub-spoke-hub", func(t *testing.T) {
		for i := 0; i < Iterations; i++ {
			in := fill(filler, newHub())
			spoke := newSpoke()
			if err := spoke.ConvertFrom(in); err != nil {
				t.Fatalf("convert hub to spoke: %v", err)
			}
			out := newHub()
			if err := spoke.ConvertTo(out); err != nil {
				t.Fatalf("convert spoke to hub: %v", err)
			}
			if !equality.Semantic.DeepEqual(in, out) {
				t.Fatalf("hub changed in a round trip through the spoke:\n%s", diff.Diff(in, out))
			}
		}
	})
	t.Run("spoke-hub-spoke", func(t *testing.T) {
		for i := 0; i < Iterations; i++ {
			in := fill(filler, newSpoke())
			hub := newHub()
			if err := in.ConvertTo(hub); err != nil {
				t.Fatalf("convert spoke to hub: %v", err)
			}
			out := newSpoke()
			if err := out.ConvertFrom(hub); err != nil {
				t.Fatalf("convert hub to spoke: %v", err)
			}
			if !equality.Semantic.DeepEqual(in, out) {
				t.Fatalf("spoke changed in a round trip through the hub:\n%s", diff.Diff(in, out))
			}
		}
	})
}

// fill randomizes obj but leaves TypeMeta empty: the conversion functions
// carry metadata, spec and status; apiVersion and kind are set by the caller.
func fill[T runtime.Object](f *randfill.Filler, obj T) T {
	f.Fill(obj)
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return obj
}
