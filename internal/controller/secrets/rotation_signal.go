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
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Rotations across shards. With --shards, the readers of one Keycloak
// client sit in namespaces of any shard, so in other processes than the
// one that rotates it. A ConfigMap per KeycloakServer in the operator's
// namespace holds an entry per client, which serves twice:
//   - a claim: the credential whose rotation of the client is under way,
//     set before the rotation starts by an update on the ConfigMap's
//     resourceVersion, so that two shards never both start one (Keycloak
//     keeps one previous secret per client). A claim whose holder no longer
//     rotates that client (gone, done, moved to another client) is free;
//   - a signal: the time of the last regeneration. Every shard watches these
//     ConfigMaps and, for each client regenerated since, forgets the secret
//     its own readers remember and queues them: each reads Keycloak again
//     and writes the new secret at once, as the readers of the same
//     process do.
//
// Only the operator and the admin write in its namespace; an entry holds
// no secret. A shard that misses a signal (it was down) has no secret in
// memory to forget, and reads Keycloak on its first pass.
const (
	// RotationsComponent is the app.kubernetes.io/component of the
	// ConfigMaps of rotations, the only ones the operator watches.
	RotationsComponent = "keycloak-rotations"
	// RotationsServerAnnotation names the KeycloakServer whose clients a
	// ConfigMap of rotations lists.
	RotationsServerAnnotation = "secrets.carbogame.com/keycloak-server"
	// rotationsKept is how long an entry without a claim stays: long
	// enough for every shard to see it; a later write drops older ones.
	rotationsKept = 24 * time.Hour
	// claimRecorded is how long a claim holds without a rotation recorded
	// by its holder: the time from the claim to the Regenerating record.
	claimRecorded = 2 * time.Minute
	// claimSkew allows for the clocks of two replicas: a rotation whose
	// start is recorded this much before its claim is taken for its own.
	claimSkew = 5 * time.Second
	// publishFor bounds the retries of a signal that failed to be written.
	publishFor = 5 * time.Minute
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

// entryBackoff spaces the tries of an entry's update that met another's:
// every shard's rotations of one server's clients write one ConfigMap.
var entryBackoff = wait.Backoff{Steps: 8, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 1, Cap: 2 * time.Second}

// RotationSignal writes and watches the ConfigMaps of rotations.
type RotationSignal struct {
	// Client writes the ConfigMaps.
	Client client.Client
	// Reader reads them, and a claim's holder, from the API server: the
	// manager's cache may hold neither (another shard's credential; the
	// operator may not watch every namespace's ConfigMaps).
	Reader client.Reader
	// Cache watches them (the cache of the operator's namespace).
	Cache cache.Cache
	// Namespace is the operator's namespace.
	Namespace string
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// id names this process in the signals it writes (By), made at the
	// first: a process restarted is another writer.
	idOnce sync.Once
	id     string
}

// writer is this process's name in the signals it writes.
func (s *RotationSignal) writer() string {
	s.idOnce.Do(func() {
		host, _ := os.Hostname()
		s.id = host + "/" + string(uuid.NewUUID())
	})
	return s.id
}

func (s *RotationSignal) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// update changes the entry of server's client realm/clientID with change,
// which says whether to write it: a read of the ConfigMap, then an update
// that holds only at the resourceVersion read (a conflict reads again, so
// no shard's entry is lost). The ConfigMap is created at the first entry,
// owned by the server (removed with it).
func (s *RotationSignal) update(ctx context.Context, server *secretsv1beta1.KeycloakServer, realm, clientID string, change func(*rotated) (bool, error)) error {
	key := client.ObjectKey{Namespace: s.Namespace, Name: RotationsName(server.Name)}
	return retry.RetryOnConflict(entryBackoff, func() error {
		var cm corev1.ConfigMap
		err := s.Reader.Get(ctx, key, &cm)
		missing := apierrors.IsNotFound(err)
		if err != nil && !missing {
			return err
		}
		r, ok := parseRotated(cm.Data[rotatedKey(realm, clientID)])
		if !ok {
			r = rotated{Realm: realm, ClientID: clientID}
		}
		if write, err := change(&r); err != nil || !write {
			return err
		}
		cm.Data = withEntry(cm.Data, r, s.now())
		if !missing {
			return s.Client.Update(ctx, &cm, client.FieldOwner(FieldManager), client.DisableReadYourWritesConsistency)
		}
		cm.ObjectMeta = metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: maps.Clone(rotationsLabels),
			Annotations: map[string]string{RotationsServerAnnotation: server.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: secretsv1beta1.GroupVersion.String(), Kind: "KeycloakServer",
				Name: server.Name, UID: server.UID}}}
		err = s.Client.Create(ctx, &cm, client.FieldOwner(FieldManager), client.DisableReadYourWritesConsistency)
		if apierrors.IsAlreadyExists(err) {
			// Created by another shard meanwhile: read it again.
			return apierrors.NewConflict(corev1.Resource("configmaps"), key.Name, err)
		}
		return err
	})
}

// claim takes kcc's client for its rotation, unless another credential
// holds it and still rotates it: then it names that one.
func (s *RotationSignal) claim(ctx context.Context, server *secretsv1beta1.KeycloakServer, kcc *secretsv1beta1.KeycloakClientCredential) (other string, err error) {
	src := kcc.Spec.Source
	err = s.update(ctx, server, src.Realm, src.ClientID, func(r *rotated) (bool, error) {
		other = ""
		if r.Holder != "" && r.HolderUID != kcc.UID {
			rotating, err := s.stillRotates(ctx, r)
			if err != nil || rotating {
				other = r.Holder
				return false, err
			}
		}
		r.Holder, r.HolderUID, r.Since = kcc.Namespace+"/"+kcc.Name, kcc.UID, s.now().UTC().Truncate(time.Millisecond)
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("claim client %q in ConfigMap %s/%s: %w", src.ClientID, s.Namespace, RotationsName(server.Name), err)
	}
	return other, nil
}

// stillRotates says whether a claim's holder still rotates its client.
func (s *RotationSignal) stillRotates(ctx context.Context, r *rotated) (bool, error) {
	ns, name, _ := strings.Cut(r.Holder, "/")
	var holder secretsv1beta1.KeycloakClientCredential
	switch err := s.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &holder); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	if holder.UID != r.HolderUID {
		return false, nil
	}
	st := holder.Status.Rotation
	if st != nil && st.Realm == r.Realm && st.ClientID == r.ClientID {
		if inProgress(&holder) != nil {
			return true, nil
		}
		if st.StartedTime != nil && !st.StartedTime.Time.Before(r.Since.Add(-claimSkew)) {
			return false, nil // recorded since the claim, and over
		}
	}
	// Claimed, its rotation not recorded yet: the holder is between its
	// claim and its Regenerating record.
	return s.now().Sub(r.Since) < claimRecorded, nil
}

// release gives the client back once kcc's rotation is over (best effort:
// a claim whose holder is done is free anyway).
func (s *RotationSignal) release(ctx context.Context, server *secretsv1beta1.KeycloakServer, realm, clientID string, holder types.UID) error {
	return s.update(ctx, server, realm, clientID, func(r *rotated) (bool, error) {
		if r.HolderUID != holder {
			return false, nil
		}
		r.Holder, r.HolderUID, r.Since = "", "", time.Time{}
		return true, nil
	})
}

// publish records that the secret of realm/clientID of server was
// regenerated at at; a failure is tried again in the background for a few
// minutes (the regeneration is recorded: failing the pass would not bring
// it back), else the other shards' readers learn it at their refresh.
func (s *RotationSignal) publish(ctx context.Context, server *secretsv1beta1.KeycloakServer, realm, clientID string, at time.Time) {
	at = at.UTC().Truncate(time.Millisecond)
	name := RotationsName(server.Name)
	write := func(ctx context.Context) error {
		return s.update(ctx, server, realm, clientID, func(r *rotated) (bool, error) { r.At, r.By = at, s.writer(); return true, nil })
	}
	if err := write(ctx); err == nil {
		return
	}
	log := logf.FromContext(ctx).WithValues("configMap", name, "client", clientID)
	server = server.DeepCopy()
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishFor)
		defer cancel()
		err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: 16, Cap: time.Minute},
			func(ctx context.Context) (bool, error) { return write(ctx) == nil, nil })
		if err != nil {
			log.Error(err, "could not tell the other shards of a rotation: their readers of the client read the new secret at their refresh")
		}
	}()
}

// ownPublication says whether this process wrote the signal r.
func (s *RotationSignal) ownPublication(r rotated) bool { return r.By == s.writer() }
