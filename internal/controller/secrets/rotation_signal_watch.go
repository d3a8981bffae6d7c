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
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// waker wakes the readers of server's rotated clients.
type waker func(ctx context.Context, server string, clients []rotated, q workqueue.TypedRateLimitingInterface[reconcile.Request])

// source is what the controller watches: the ConfigMaps of rotations,
// each change waking the readers of the clients it names.
func (s *RotationSignal) source(wake waker) source.TypedSource[reconcile.Request] {
	return source.TypedKind(s.Cache, &corev1.ConfigMap{}, handler.TypedFuncs[*corev1.ConfigMap, reconcile.Request]{
		// The initial list is history: a process just started remembers
		// no secret, and reconciles every resource anyway.
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*corev1.ConfigMap], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if !e.IsInInitialList {
				s.changed(ctx, e.Object, nil, wake, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*corev1.ConfigMap], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			s.changed(ctx, e.ObjectNew, e.ObjectOld.Data, wake, q)
		},
	})
}

// changed wakes the readers of the clients that cm names and before did
// not (or at another time), but for the ones this process rotated: it woke
// their readers already.
func (s *RotationSignal) changed(ctx context.Context, cm *corev1.ConfigMap, before map[string]string, wake waker, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var others []rotated
	for _, r := range changedRotations(before, cm.Data) {
		if !s.ownPublication(r) {
			others = append(others, r)
		}
	}
	if server := cm.Annotations[RotationsServerAnnotation]; server != "" && len(others) > 0 {
		wake(ctx, server, others, q)
	}
}

// wakeReaders forgets what this process's readers of the rotated clients
// of server remember, and queues them.
func (r *KeycloakClientCredentialReconciler) wakeReaders(ctx context.Context, server string, clients []rotated, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var ks secretsv1beta1.KeycloakServer
	if err := r.Get(ctx, client.ObjectKey{Name: server}, &ks); err != nil {
		return // gone: its readers fail on their own
	}
	for _, c := range clients {
		r.recent.forgetClient(ks.UID, c.Realm, c.ClientID)
		reqs, err := r.readersOf(ctx, server, c.Realm, c.ClientID)
		if err != nil {
			logf.FromContext(ctx).Error(err, "list the readers of a client rotated by another shard", "server", server, "client", c.ClientID)
		}
		for _, req := range reqs {
			q.Add(req)
		}
	}
}
