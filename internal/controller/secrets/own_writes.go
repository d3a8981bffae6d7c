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
//
// A create's watch event can come before its response, when its
// resourceVersion is not known yet: the event queued the resource again,
// whose next pass read a cache the pass's own status write had not reached,
// and failed on the conflict, at scale thousands of times. So a create in flight
// holds the create events of its name until it returns (creating).
type ownWrites struct {
	mu sync.Mutex
	m  map[types.NamespacedName][]string
	// creates are the creates in flight, by name.
	creates map[types.NamespacedName]*createInFlight
}

// createInFlight is one name's creates under way (two resources may write
// the same Secret name; one create wins) and the resourceVersions of the
// create events seen meanwhile.
type createInFlight struct {
	count int
	seen  []string
}

// ownWritesKept is how many writes of one Secret are remembered.
const ownWritesKept = 2

// wrote records a Secret as the API server returned it after a write.
func (w *ownWrites) wrote(o client.Object) {
	w.wroteVersion(o.GetNamespace(), o.GetName(), o.GetResourceVersion())
}

// wroteVersion records the resourceVersion a write left on namespace/name.
func (w *ownWrites) wroteVersion(namespace, name, resourceVersion string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.record(types.NamespacedName{Namespace: namespace, Name: name}, resourceVersion)
}

// creating says a create of namespace/name is under way, and returns what
// to call when it returns, with the Secret created or nil (once; later
// calls do nothing, so it may also be deferred). Meanwhile a create event
// of that name is taken for its echo: if the create fails (AlreadyExists:
// someone else's Secret), the pass itself reads the Secret in the way, so
// the event is not needed; if it succeeds, an event seen with its
// resourceVersion was its echo, and one still to come is known. done
// reports another version seen meanwhile (a relist after a dropped watch
// shows only the Secret's latest version): the pass reads the Secret again.
func (w *ownWrites) creating(namespace, name string) (done func(created client.Object) (others bool)) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.creates == nil {
		w.creates = map[types.NamespacedName]*createInFlight{}
	}
	f := w.creates[key]
	if f == nil {
		f = &createInFlight{}
		w.creates[key] = f
	}
	f.count++
	finished := false
	return func(created client.Object) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		if finished {
			return false
		}
		finished = true
		others := false
		if created != nil {
			rv := created.GetResourceVersion()
			if i := slices.Index(f.seen, rv); i >= 0 {
				f.seen = slices.Delete(f.seen, i, i+1) // its echo came first
			} else {
				w.record(key, rv)
			}
			others = len(f.seen) > 0
		}
		if f.count--; f.count == 0 {
			delete(w.creates, key)
		}
		return others
	}
}

// record keeps resourceVersion as key's last write; w.mu is held.
func (w *ownWrites) record(key types.NamespacedName, resourceVersion string) {
	if resourceVersion == "" {
		return
	}
	if w.m == nil {
		w.m = map[types.NamespacedName][]string{}
	}
	if slices.Contains(w.m[key], resourceVersion) {
		return // an apply that changed nothing returns the version it found
	}
	kept := append(w.m[key], resourceVersion)
	w.m[key] = kept[max(0, len(kept)-ownWritesKept):]
}

// isCreateEcho is isEcho for a create event, which a create of the same
// name still under way takes for its own.
func (w *ownWrites) isCreateEcho(o client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
	if w.seenOnce(key, o.GetResourceVersion()) {
		return true // a create that returned first (another may be under way)
	}
	if f := w.creates[key]; f != nil {
		f.seen = append(f.seen, o.GetResourceVersion())
		return true
	}
	return false
}

// isEcho reports whether o is one of the writes recorded for its name,
// and forgets that write: an echo is seen once.
func (w *ownWrites) isEcho(o client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seenOnce(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, o.GetResourceVersion())
}

// seenOnce is isEcho's work; w.mu is held.
func (w *ownWrites) seenOnce(key types.NamespacedName, resourceVersion string) bool {
	kept := w.m[key]
	i := slices.Index(kept, resourceVersion)
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
		CreateFunc: func(e event.CreateEvent) bool { return !w.isCreateEcho(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !w.isEcho(e.ObjectNew) },
		DeleteFunc: func(e event.DeleteEvent) bool {
			w.forget(e.Object.GetNamespace(), e.Object.GetName())
			return true
		},
	}
}
