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
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

// Hub is a hub object as the webhooks see it.
type Hub interface {
	conversion.Hub
	metav1.Object
}

// Fits refuses an object whose view in one of its other versions would
// need conversion data its annotations leave no room for (see the package
// comment): the object must come back from each view as it was (its own
// conversion-data annotation aside: saved data of an older view, stale or
// not, is no part of what must survive). An update whose object did not
// come back either (admitted before this check) passes when it makes the
// annotations no larger, so that it can still lose its finalizer or be
// edited down. key is the group's conversion-data annotation; each view
// comes with a fresh hub to convert it back into.
func Fits(key string, old, obj Hub, views ...func() (conversion.Convertible, Hub)) *field.Error {
	for _, view := range views {
		version, ok, err := roundTrips(key, obj, view)
		if err != nil {
			return field.InternalError(field.NewPath("metadata"), err)
		}
		if ok {
			continue
		}
		if old != nil && size(obj.GetAnnotations()) <= size(old.GetAnnotations()) {
			if _, oldOK, err := roundTrips(key, old, view); err == nil && !oldOK {
				continue
			}
		}
		return field.Forbidden(field.NewPath("metadata", "annotations"), fmt.Sprintf(
			"take %d bytes, which leaves too little room under the API server's limit of %d bytes for the %s annotation that the %s view of this object needs to convert without loss: make the annotations smaller",
			size(obj.GetAnnotations()), apivalidation.TotalAnnotationSizeLimitB, key, version))
	}
	return nil
}

// roundTrips converts obj into a view and back, and reports whether it
// came back as it was, and the view's version.
func roundTrips(key string, obj Hub, view func() (conversion.Convertible, Hub)) (string, bool, error) {
	spoke, back := view()
	version := spoke.GetObjectKind().GroupVersionKind().Version
	if err := spoke.ConvertFrom(obj.DeepCopyObject().(conversion.Hub)); err != nil {
		return version, false, fmt.Errorf("convert to %s: %w", version, err)
	}
	if err := spoke.ConvertTo(back); err != nil {
		return version, false, fmt.Errorf("convert back from %s: %w", version, err)
	}
	back.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	want := obj.DeepCopyObject().(Hub)
	want.SetAnnotations(copyWithout(want.GetAnnotations(), key))
	back.SetAnnotations(copyWithout(back.GetAnnotations(), key))
	return version, equality.Semantic.DeepEqual(back, want), nil
}
