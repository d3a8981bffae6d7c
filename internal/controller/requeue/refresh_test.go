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

package requeue

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRefreshSpreadsTheFirstCheckOnlyAndQueuesBehindEvents(t *testing.T) {
	var r Refresh
	const interval = time.Minute
	spread := map[time.Duration]bool{}
	for i := range 200 {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: string(rune('a'+i%26)) + string(rune('a'+i/26))}}
		first := r.After(req, interval)
		if first.RequeueAfter < interval || first.RequeueAfter >= 2*interval {
			t.Fatalf("first refresh after %s, want within [%s, %s)", first.RequeueAfter, interval, 2*interval)
		}
		spread[first.RequeueAfter] = true
		if next := r.After(req, interval); next.RequeueAfter != interval {
			t.Fatalf("a later refresh after %s, want exactly %s: drift must be found within one interval", next.RequeueAfter, interval)
		}
		if first.Priority == nil || *first.Priority != handler.LowPriority {
			t.Fatalf("a refresh is queued at priority %v, want low (%d)", first.Priority, handler.LowPriority)
		}
		r.Forget(req) // gone: a new object of that name is new again
		if again := r.After(req, interval); again.RequeueAfter < interval || again.RequeueAfter >= 2*interval {
			t.Fatalf("a forgotten object's refresh after %s", again.RequeueAfter)
		}
	}
	if len(spread) < 100 {
		t.Fatalf("200 first refreshes took %d distinct delays: not spread", len(spread))
	}
}
