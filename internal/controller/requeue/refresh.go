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

// Package requeue says when a controller looks at an object again: the
// periodic refresh, spread and queued behind events, and the backoff after
// a failure.
package requeue

import (
	"math/rand/v2"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Refresh schedules the periodic checks of objects found in step.
//
// Two things keep a large fleet gentle on Vault and Keycloak:
//   - A refresh is queued at low priority, so a watch event (an edited or
//     deleted Secret, a spec change) is reconciled before any refresh that
//     is due at the same time. Without it a refresh keeps the priority of
//     the event that last queued the object.
//   - The first refresh after this process first saw an object is delayed
//     by a random part of one more interval. After a restart every object
//     is reconciled at once, as fast as the servers answer; with a tenth,
//     the next checks came back as that same burst one interval later, and
//     with half, as a wave twice the even pace, which took the machine
//     from the repairs made meanwhile (make bench P4). Spread over the
//     whole interval, the checks come at an even pace. Later checks keep
//     the spread at exactly the interval, so drift is found within one
//     interval of the last check, and within two after a restart.
//
// The zero value is ready to use; it is safe for concurrent use.
type Refresh struct {
	seen sync.Map // reconcile.Request → struct{}
}

// After is the result that checks the object again after interval.
func (r *Refresh) After(req reconcile.Request, interval time.Duration) ctrl.Result {
	if _, seen := r.seen.LoadOrStore(req, struct{}{}); !seen && firstSpread(interval) > 0 {
		interval += rand.N(firstSpread(interval))
	}
	return ctrl.Result{RequeueAfter: interval, Priority: new(handler.LowPriority)}
}

// firstSpread is how far the first refresh of an object is spread.
func firstSpread(interval time.Duration) time.Duration { return interval }

// Forget drops an object that is gone.
func (r *Refresh) Forget(req reconcile.Request) { r.seen.Delete(req) }
