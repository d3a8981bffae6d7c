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
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
)

// recentSecrets remembers the client secret each resource last read from
// Keycloak, so that a reconcile brought by an edited or deleted target
// Secret restores it at once from memory instead of asking Keycloak again.
// A secret serves until the refresh scheduled after its read: Keycloak is
// still read once per refresh (spread after a restart: shared.Refresh), and
// at once after a change of the resource's spec, of its server's spec, or a
// rotation. Had it served one interval flat, every secret read in a
// restart's burst would have expired together, an interval later, and each
// repair then would have waited for Keycloak (make bench P4). (The same
// values sit in the cache of managed Secrets anyway.)
type recentSecrets struct {
	m sync.Map // types.NamespacedName → recentSecret
}

// recentSource is what a remembered secret was read for: this resource
// (by UID: a new one of the same name starts afresh) at this spec, from
// this server (by UID: a server re-created under the same name may point
// elsewhere) at its spec.
type recentSource struct {
	uid              types.UID
	generation       int64
	serverUID        types.UID
	serverGeneration int64
	realm, clientID  string
}

type recentSecret struct {
	source recentSource
	cred   keycloak.Credential
	until  time.Time
}

// get returns the secret read for source if it still serves at now, and
// for how much longer.
func (c *recentSecrets) get(key types.NamespacedName, source recentSource, now time.Time) (keycloak.Credential, time.Duration, bool) {
	v, ok := c.m.Load(key)
	if !ok {
		return keycloak.Credential{}, 0, false
	}
	r := v.(recentSecret)
	if r.source != source || !now.Before(r.until) {
		return keycloak.Credential{}, 0, false
	}
	return r.cred, r.until.Sub(now), true
}

// put remembers a secret just read, serving until until.
func (c *recentSecrets) put(key types.NamespacedName, source recentSource, cred keycloak.Credential, until time.Time) {
	c.m.Store(key, recentSecret{source: source, cred: cred, until: until})
}

// serveUntil moves the end of a remembered secret's service to the refresh
// scheduled after its read.
func (c *recentSecrets) serveUntil(key types.NamespacedName, until time.Time) {
	if v, ok := c.m.Load(key); ok {
		r := v.(recentSecret)
		r.until = until
		c.m.CompareAndSwap(key, v, r)
	}
}

func (c *recentSecrets) forget(key types.NamespacedName) { c.m.Delete(key) }

// forgetClient forgets what every resource remembers of one client of one
// server: after a rotation, another resource reading the same client must
// not restore the secret it just replaced.
func (c *recentSecrets) forgetClient(serverUID types.UID, realm, clientID string) {
	c.m.Range(func(k, v any) bool {
		if s := v.(recentSecret).source; s.serverUID == serverUID && s.realm == realm && s.clientID == clientID {
			c.m.CompareAndDelete(k, v)
		}
		return true
	})
}
