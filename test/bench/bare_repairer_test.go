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

package bench

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// bareLabel marks the Secrets the bare repairer keeps: the operator
	// never looks at them.
	bareLabel = "bench.vko/bare"
	// bareSecrets is one per Secret P4 edits or deletes over its rounds.
	bareSecrets = secretSets * (editedSecrets + deletedSecrets)
)

// bareName is the bare repairer's Secret beside target Secret i.
func bareName(i int) client.ObjectKey {
	return client.ObjectKey{Namespace: nsName(i), Name: fmt.Sprintf("bare-%04d", i)}
}

// createBareSecrets gives the bare repairer its Secrets: a copy of each
// target Secret P4 touches (same namespace, same data), so that the limit
// writes what the operator writes.
func (f *fleet) createBareSecrets(b *testing.B) {
	b.Helper()
	ctx := context.Background()
	parallel(b, bareSecrets, creators, func(i int) error {
		var target corev1.Secret
		if err := f.c.Get(ctx, client.ObjectKey{Namespace: nsName(i), Name: fmt.Sprintf("fleet-%04d", i)}, &target); err != nil {
			return err
		}
		key := bareName(i)
		return f.c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{bareLabel: "true"}},
			Data:       target.Data,
		})
	})
}

// bareRepairer is P4's limit: the fastest plain client that keeps Secrets
// as they should be. It watches its own Secrets and restores each one
// edited or deleted with a single write from memory, with as many workers
// as the credential controller. No grant check, no status, no Event: only
// the watch and the write that every repair needs. It runs in the same
// rounds as the operator's repairs, its Secrets edited and deleted in the
// same burst, so that both are measured on the same machine at the same
// moment (absolute times on these machines drift from hour to hour).
type bareRepairer struct {
	c     client.Client
	want  map[client.ObjectKey]map[string][]byte
	queue workqueue.TypedInterface[client.ObjectKey]

	mu sync.Mutex
	// seen is each Secret as the watch last showed it, nil once deleted.
	seen map[client.ObjectKey]*corev1.Secret
	// Writes counts the repairs' writes (a conflict's retry included).
	writes int
}

// startBareRepairer lists the bare Secrets (what they hold now is what
// they should hold) and repairs them until ctx ends.
func (f *fleet) startBareRepairer(ctx context.Context, b *testing.B, wc client.WithWatch) *bareRepairer {
	b.Helper()
	var list corev1.SecretList
	if err := wc.List(ctx, &list, client.MatchingLabels{bareLabel: "true"}); err != nil {
		b.Fatal(err)
	}
	r := &bareRepairer{c: wc, want: map[client.ObjectKey]map[string][]byte{}, seen: map[client.ObjectKey]*corev1.Secret{},
		queue: workqueue.NewTyped[client.ObjectKey]()}
	for i := range list.Items {
		key := client.ObjectKeyFromObject(&list.Items[i])
		r.want[key] = list.Items[i].Data
		r.seen[key] = &list.Items[i]
	}
	w, err := wc.Watch(ctx, &corev1.SecretList{}, client.MatchingLabels{bareLabel: "true"},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		<-ctx.Done()
		w.Stop()
		r.queue.ShutDown()
	}()
	go r.observe(w)
	for range defaultWorkers {
		go r.work(ctx)
	}
	return r
}

// observe queues every Secret the watch shows out of step.
func (r *bareRepairer) observe(w watch.Interface) {
	for ev := range w.ResultChan() {
		s, ok := ev.Object.(*corev1.Secret)
		if !ok {
			continue
		}
		key := client.ObjectKeyFromObject(s)
		r.mu.Lock()
		if ev.Type == watch.Deleted {
			r.seen[key] = nil
		} else {
			r.seen[key] = s
		}
		r.mu.Unlock()
		if ev.Type == watch.Deleted || !sameData(s.Data, r.want[key]) {
			r.queue.Add(key)
		}
	}
}

// work restores queued Secrets: a create where it was deleted, an update
// from the version the watch showed where it was edited.
func (r *bareRepairer) work(ctx context.Context) {
	for {
		key, shutdown := r.queue.Get()
		if shutdown {
			return
		}
		r.mu.Lock()
		seen := r.seen[key]
		r.writes++
		r.mu.Unlock()
		var err error
		switch {
		case seen == nil:
			err = r.c.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{bareLabel: "true"}},
				Data:       r.want[key],
			})
		case !sameData(seen.Data, r.want[key]):
			s := seen.DeepCopy()
			s.Data = r.want[key]
			err = r.c.Update(ctx, s)
		}
		r.queue.Done(key)
		// A conflict or a name still taken: the watch brings the newer
		// version, which queues the Secret again if it is still out of step.
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			r.queue.Add(key)
		}
	}
}

// Writes is how many writes the repairs took so far.
func (r *bareRepairer) Writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

func sameData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}
