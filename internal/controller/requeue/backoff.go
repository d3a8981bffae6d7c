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
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultMaxBackoff caps the wait between retries when none is configured.
const DefaultMaxBackoff = 2 * time.Minute

// RateLimiter retries a failed reconcile after 500ms, doubling up to
// maxBackoff (DefaultMaxBackoff when zero): external failures back off
// without ever waiting longer than the cap.
func RateLimiter(maxBackoff time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	if maxBackoff == 0 {
		maxBackoff = DefaultMaxBackoff
	}
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](500*time.Millisecond, maxBackoff)
}
