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

// Package lossless converts between two API versions whose field mappings
// lose information, and keeps what was lost in one annotation so that a round
// trip through the other version gives back the original, as cluster-api's
// util/conversion does.
//
// The rule, for a conversion of a value src (in version A) into version B:
//
//  1. If src's object carries saved B data, and that saved value converts back
//     to exactly src, the saved value is the result: nothing was edited in A
//     since it was saved. Otherwise the result is the mapped value to(src), so
//     an edit made through version A always wins over stale saved data.
//  2. If the result does not convert back to exactly src, src itself is saved
//     on the converted object, so converting back restores it.
//
// Each object carries at most one saved value, so one annotation suffices.
// Every annotation other than that key is copied unchanged.
//
// The API server bounds an object's annotations (256 KiB in all) and checks
// the converted object against that bound: a conversion that returned more
// would fail every LIST and WATCH of that version, cluster-wide. So a saved
// value that does not fit is not saved: that one view is lossy, and the
// stored object keeps everything. The validating webhooks refuse, through
// Fits, any object whose views would need that; only objects admitted
// before they did can still meet it.
package lossless

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Convert maps src from srcObj's version into dstObj's version with to, using
// back (the reverse mapping) to detect loss, and sets dstObj's annotations.
// key is the annotation that holds saved data for the object's API group.
func Convert[Src, Dst any](key string, srcObj, dstObj metav1.Object, src Src, to func(Src) Dst, back func(Dst) Src) (Dst, error) {
	result, restored := restore(key, srcObj, src, back)
	if !restored {
		result = to(src)
	}

	annotations := copyWithout(srcObj.GetAnnotations(), key)
	if !equality.Semantic.DeepEqual(back(result), src) {
		saved, err := json.Marshal(src)
		if err != nil {
			return result, err
		}
		if size(annotations)+len(key)+len(saved) <= apivalidation.TotalAnnotationSizeLimitB {
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[key] = string(saved)
		}
	}
	dstObj.SetAnnotations(annotations)
	return result, nil
}

// restore returns the value saved on obj under key if it still converts back
// to src.
// Saved data that no longer parses (edited by hand, or from an older release)
// is ignored: the mapped value is always a valid result.
func restore[Src, Dst any](key string, obj metav1.Object, src Src, back func(Dst) Src) (Dst, bool) {
	var saved Dst
	data, ok := obj.GetAnnotations()[key]
	if !ok || json.Unmarshal([]byte(data), &saved) != nil || !equality.Semantic.DeepEqual(back(saved), src) {
		var zero Dst
		return zero, false
	}
	return saved, true
}

func copyWithout(in map[string]string, key string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if k == key {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(in))
		}
		out[k] = v
	}
	return out
}

// size is what annotations count against the API server's bound.
func size(annotations map[string]string) int {
	n := 0
	for k, v := range annotations {
		n += len(k) + len(v)
	}
	return n
}
