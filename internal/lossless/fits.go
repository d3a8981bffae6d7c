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
// comment): the view converts back to the object unchanged, or the object
// is refused, naming metadata.annotations and the rule. An update that
// makes the annotations no larger passes even so, so that an object
// admitted before this check can still lose its finalizer or be edited
// down. key is the group's conversion-data annotation; each view comes
// with a fresh hub to convert it back into.
func Fits(key string, old, obj Hub, views ...func() (conversion.Convertible, Hub)) *field.Error {
	if old != nil && size(obj.GetAnnotations()) <= size(old.GetAnnotations()) {
		return nil
	}
	for _, view := range views {
		spoke, back := view()
		if err := spoke.ConvertFrom(obj.DeepCopyObject().(conversion.Hub)); err != nil {
			return field.InternalError(field.NewPath("metadata"), fmt.Errorf("convert to the other version: %w", err))
		}
		if err := spoke.ConvertTo(back); err != nil {
			return field.InternalError(field.NewPath("metadata"), fmt.Errorf("convert back from the other version: %w", err))
		}
		back.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		if !equality.Semantic.DeepEqual(back, obj) {
			return field.Forbidden(field.NewPath("metadata", "annotations"), fmt.Sprintf(
				"take %d bytes, which leaves too little room under the API server's limit of %d bytes for the %s annotation that the %s view of this object needs to convert without loss: make the annotations smaller",
				size(obj.GetAnnotations()), apivalidation.TotalAnnotationSizeLimitB, key, spoke.GetObjectKind().GroupVersionKind().Version))
		}
	}
	return nil
}
