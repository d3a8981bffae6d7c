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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Rotations across shards. With --shards, the readers of one Keycloak
// client sit in namespaces of any shard, so in other processes than the
// one that regenerated its secret. That one writes the regeneration down
// in a ConfigMap of the operator's namespace, one per KeycloakServer (a
// key per client, the time it was regenerated); every shard watches these
// ConfigMaps and, for each client whose entry changed, forgets the secret
// its own readers remember and queues them: each reads Keycloak again and
// writes the new secret at once, as the readers of the same process do.
// Only the operator and the admin write in its namespace; an entry holds
// no secret. A shard that misses an entry (it was down) has no secret in
// memory to forget, and reads Keycloak on its first pass.
const (
	// RotationsComponent is the app.kubernetes.io/component of the
	// ConfigMaps of rotations, the only ones the operator watches.
	RotationsComponent = "keycloak-rotations"
	// RotationsServerAnnotation names the KeycloakServer whose clients a
	// ConfigMap of rotations lists.
	RotationsServerAnnotation = "secrets.carbogame.com/keycloak-server"
	// rotationsKept is how long an entry stays: long enough for every
	// shard to see it; a later write drops older entries.
	rotationsKept = 24 * time.Hour
)

// RotationsConfigMaps selects the ConfigMaps of rotations.
func RotationsConfigMaps() labels.Selector { return labels.SelectorFromSet(rotationsLabels) }

// rotationsLabels are the labels of a ConfigMap of rotations.
var rotationsLabels = labels.Set{"app.kubernetes.io/component": RotationsComponent, ManagedByLabel: ManagedByValue}

// RotationsName is the name of server's ConfigMap of rotations: a digest,
// since a server's name may be longer than a ConfigMap's may be.
func RotationsName(server string) string {
	sum := sha256.Sum256([]byte(server))
	return "keycloak-rotations-" + hex.EncodeToString(sum[:8])
}

// rotated is one entry: a client whose secret was regenerated at At.
type rotated struct {
	Realm    string    `json:"realm"`
	ClientID string    `json:"clientId"`
	At       time.Time `json:"at"`
}

// rotatedKey is the entry's key: a digest, since a clientId may hold
// characters a ConfigMap key may not.
func rotatedKey(realm, clientID string) string {
	sum := sha256.Sum256([]byte(realm + "\x00" + clientID))
	return hex.EncodeToString(sum[:12])
}

// changedRotations are the entries of now that before lacks or holds with
// another value: the clients regenerated since. An entry that does not
// parse is skipped (the admin edited it).
func changedRotations(before, now map[string]string) []rotated {
	var out []rotated
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if v, ok := before[k]; ok && v == now[k] {
			continue
		}
		var r rotated
		if json.Unmarshal([]byte(now[k]), &r) == nil && r.ClientID != "" {
			out = append(out, r)
		}
	}
	return out
}

// withRotation is data with r's entry set and the entries older than
// rotationsKept before r.At dropped.
func withRotation(data map[string]string, r rotated) map[string]string {
	out := map[string]string{}
	for k, v := range data {
		var old rotated
		if json.Unmarshal([]byte(v), &old) == nil && r.At.Sub(old.At) < rotationsKept {
			out[k] = v
		}
	}
	entry, _ := json.Marshal(r) // strings and a time always marshal
	out[rotatedKey(r.Realm, r.ClientID)] = string(entry)
	return out
}

// RotationSignal writes and watches the ConfigMaps of rotations.
type RotationSignal struct {
	// Client reads and writes the ConfigMaps on the API server.
	Client client.Client
	// Cache watches them (the cache of the operator's namespace).
	Cache cache.Cache
	// Namespace is the operator's namespace.
	Namespace string

	// published are the entries this process wrote (ConfigMap/key → At):
	// it has woken its own readers already.
	published sync.Map
}

// publish records that the secret of realm/clientID of server was
// regenerated at at.
func (s *RotationSignal) publish(ctx context.Context, server, realm, clientID string, at time.Time) error {
	r := rotated{Realm: realm, ClientID: clientID, At: at.UTC().Truncate(time.Millisecond)}
	key := client.ObjectKey{Namespace: s.Namespace, Name: RotationsName(server)}
	s.published.Store(key.Name+"/"+rotatedKey(realm, clientID), r.At)
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var cm corev1.ConfigMap
		err := s.Client.Get(ctx, key, &cm)
		if apierrors.IsNotFound(err) {
			cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels:      maps.Clone(rotationsLabels),
				Annotations: map[string]string{RotationsServerAnnotation: server}},
				Data: withRotation(nil, r)}
			err = s.Client.Create(ctx, &cm, client.FieldOwner(FieldManager))
			if apierrors.IsAlreadyExists(err) {
				// Created by another shard meanwhile: read it again.
				return apierrors.NewConflict(corev1.Resource("configmaps"), key.Name, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		// An update holds only at the resourceVersion read: a conflict
		// reads again, so no shard's entry is lost.
		cm.Data = withRotation(cm.Data, r)
		return s.Client.Update(ctx, &cm, client.FieldOwner(FieldManager))
	})
	if err != nil {
		return fmt.Errorf("write the rotation of client %q to ConfigMap %s: %w", clientID, key, err)
	}
	return nil
}

// ownPublication says whether this process wrote the entry r of ConfigMap
// name.
func (s *RotationSignal) ownPublication(name string, r rotated) bool {
	at, ok := s.published.Load(name + "/" + rotatedKey(r.Realm, r.ClientID))
	return ok && at.(time.Time).Equal(r.At)
}

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
		if !s.ownPublication(cm.Name, r) {
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
	var list secretsv1beta1.KeycloakClientCredentialList
	if err := r.List(ctx, &list, client.MatchingFields{serverRefIndex: server}); err != nil {
		logf.FromContext(ctx).Error(err, "list the readers of a client rotated by another shard", "server", server)
		return
	}
	for _, c := range clients {
		r.recent.forgetClient(ks.UID, c.Realm, c.ClientID)
		for i := range list.Items {
			if src := list.Items[i].Spec.Source; src.Realm == c.Realm && src.ClientID == c.ClientID {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
	}
}
