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

package manager

import (
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClientOptions are the options of the manager's client: it reads its own
// writes. A read from the cache waits until the cache holds every write
// this process made to the object (a List, to its kind) before it answers,
// so that no pass decides on a status older than the one its previous pass
// wrote (a rotation's step taken twice). controller-runtime keeps that
// record by resourceVersion; the API server stays the only place the state
// lives.
//
// A write to an object the manager's cache does not hold (another cache's
// ConfigMaps, a workload, an Event, a Secret outside the cache's label
// selection) passes client.DisableReadYourWritesConsistency: a kind without
// an informer would get one, and a write the informer never shows would be
// waited for until another object of its kind changes. Reads that need no
// wait (watch mappings, polls, metrics, webhooks) opt out too.
//
// A read waits without a deadline of its own: ReconciliationTimeout bounds
// a pass, so that a wait the cache never ends (a deletion it missed in a
// relist) fails and is retried instead of holding a worker.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)}}
}

// ReconciliationTimeout is the longest one pass of any controller runs:
// far above a pass's Vault and Keycloak requests, each bounded on its own.
const ReconciliationTimeout = 2 * time.Minute
