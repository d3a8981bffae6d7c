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
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ownWrites remembers the resourceVersions of the last writes this
// process made to each target Secret (two at most: a removal and the apply
// after it), so that the watch events of those very writes (their echoes)
// do not queue the resource again. Every repair used to cost two passes,
// the repair and a pass that found its own write in step, and the second
// took a worker from the next repair (make bench P4). Only an exact echo
// is dropped: any write by someone else carries another resourceVersion
// and is reconciled as ever.
type ownWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName][]string
}

// ownWritesKept is how many writes of one Secret are remembered.
const ownWritesKept = 2

// wrote records a Secret as the API server returned it after a write.
func (w *ownWrites) wrote(o client.Object) {
	w.wroteVersion(o.GetNamespace(), o.GetName(), o.GetResourceVersion())
}

// wroteVersion records the resourceVersion a write left on namespace/name.
func (w *ownWrites) wroteVersion(namespace, name, resourceVersion string) {
	if resourceVersion == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[types.NamespacedName][]string{}
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if slices.Contains(w.m[key], resourceVersion) {
		return // an apply that changed nothing returns the version it found
	}
	kept := append(w.m[key], resourceVersion)
	w.m[key] = kept[max(0, len(kept)-ownWritesKept):]
}

// isEcho reports whether o is one of the writes recorded for its name,
// and forgets that write: an echo is seen once.
func (w *ownWrites) isEcho(o client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	kept := w.m[key]
	i := slices.Index(kept, o.GetResourceVersion())
	if i < 0 {
		return false
	}
	if kept = slices.Delete(kept, i, i+1); len(kept) == 0 {
		delete(w.m, key)
	} else {
		w.m[key] = kept
	}
	return true
}

// forget drops what is recorded for namespace/name (the Secret is gone).
func (w *ownWrites) forget(namespace, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, types.NamespacedName{Namespace: namespace, Name: name})
}

// notEchoes passes every Secret event but the echoes of this process's own
// last writes (creates and updates; a deletion always passes).
func (w *ownWrites) notEchoes() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !w.isEcho(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !w.isEcho(e.ObjectNew) },
		DeleteFunc: func(e event.DeleteEvent) bool {
			w.forget(e.Object.GetNamespace(), e.Object.GetName())
			return true
		},
	}
}
