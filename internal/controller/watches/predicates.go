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

// Package watches holds the controllers' event filters and the one shape
// of every "this changed, so reconcile those" mapper.
package watches

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// SpecChangedOrFinalizerMissing passes an update of the controller's own
// kind when the spec changed or deletion began (both move the generation),
// or when the operator's finalizer is not on the object: the operator's
// own finalizer and status writes do not reconcile again, but a finalizer
// removed by hand is put back at once, before a deletion could skip the
// cleanup.
func SpecChangedOrFinalizerMissing(finalizer string) predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectNew != nil && !controllerutil.ContainsFinalizer(e.ObjectNew, finalizer)
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}

// AnnotationsChanged passes an update that changes one of the annotations
// named: the requests users make by annotation (refresh now, rotate now),
// which move no generation.
func AnnotationsChanged(keys ...string) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			old, now := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
			for _, k := range keys {
				if old[k] != now[k] {
					return true
				}
			}
			return false
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// NamespaceGrantsChanged passes a Namespace update only when what the
// operator reads of a namespace changed: its labels and annotations (the
// admin's grants and consent) or its deletion. A namespace's status and
// managedFields change often and mean nothing here; each event would
// otherwise queue every object the namespace holds or receives.
var NamespaceGrantsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		return !maps.Equal(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()) ||
			!maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
			!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
	},
}
