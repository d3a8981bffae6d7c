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

package shared

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

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
