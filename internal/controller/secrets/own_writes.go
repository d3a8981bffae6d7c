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
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ownWrites remembers the resourceVersion of the last write this process
// made to each target Secret, so that the watch event of that very write
// (its echo) does not queue the resource again. Every repair used to cost
// two passes, the repair and a pass that found its own write in step, and
// the second took a worker from the next repair (make bench P4). Only an
// exact echo is dropped: any write by someone else after it carries
// another resourceVersion and is reconciled as ever.
type ownWrites struct {
	m sync.Map // types.NamespacedName → string (resourceVersion)
}

// wrote records a Secret as the API server returned it after a write.
func (w *ownWrites) wrote(o client.Object) {
	w.wroteVersion(o.GetNamespace(), o.GetName(), o.GetResourceVersion())
}

// wroteVersion records the resourceVersion a write left on namespace/name.
func (w *ownWrites) wroteVersion(namespace, name, resourceVersion string) {
	w.m.Store(types.NamespacedName{Namespace: namespace, Name: name}, resourceVersion)
}

// isEcho reports whether o is exactly the last write recorded for its
// name, and forgets that write: an echo is seen once.
func (w *ownWrites) isEcho(o client.Object) bool {
	key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	rv, ok := w.m.Load(key)
	if !ok || rv.(string) != o.GetResourceVersion() || rv.(string) == "" {
		return false
	}
	w.m.CompareAndDelete(key, rv)
	return true
}

// notEchoes passes every Secret event but the echo of this process's own
// last write (creates and updates; a deletion always passes).
func (w *ownWrites) notEchoes() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !w.isEcho(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !w.isEcho(e.ObjectNew) },
		DeleteFunc: func(e event.DeleteEvent) bool {
			w.m.Delete(types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()})
			return true
		},
	}
}
