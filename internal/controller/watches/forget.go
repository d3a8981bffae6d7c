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
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ForgetOnDelete is an event handler that, before its own handling of a
// deletion, forgets the deleted object's name: a deleted server's pooled
// client (its token, its connections), on every shard, while the server's
// own controller runs on shard 0 alone. A server with a cleanup finalizer
// is deleted for good only once its cleanup, which uses the client, is
// done.
type ForgetOnDelete struct {
	handler.EventHandler
	Forget func(name string)
}

func (h ForgetOnDelete) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if e.Object != nil {
		h.Forget(e.Object.GetName())
	}
	h.EventHandler.Delete(ctx, e, q)
}
