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

package vault

// A deleted VaultServer's client (its token, its connections) is dropped
// on every replica. The VaultServer controller forgets it too, but with
// --shards it runs on shard 0 alone, while every shard's VaultApps build
// clients: the others would keep a deleted server's until they stop
// (watches.ForgetOnDelete).

// forgetter drops what is kept for a server by its name.
type forgetter interface{ Forget(name string) }

// Forget drops the client of a VaultServer that is gone.
func (v *ClusterDestinations) Forget(name string) {
	if v.Clients != nil {
		v.Clients.Forget(name)
	}
}
