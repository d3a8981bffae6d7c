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

package watches

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Requests maps the items of a list to reconcile requests, keeping those
// keep accepts (nil keeps all): the one shape of every "this changed, so
// reconcile those" mapper.
func Requests[T any, P interface {
	*T
	client.Object
}](items []T, keep func(P) bool) []reconcile.Request {
	var out []reconcile.Request
	for i := range items {
		obj := P(&items[i])
		if keep == nil || keep(obj) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
	}
	return out
}
