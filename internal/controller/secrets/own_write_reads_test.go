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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitCounter is the manager's client as read-your-writes consistency
// makes it: a Get of a Secret this pass wrote (without the opt-out) waits
// for that write's watch echo. It counts such Gets.
type waitCounter struct {
	client.Client
	written map[client.ObjectKey]bool
	waits   []client.ObjectKey
}

func (c *waitCounter) wrote(obj client.Object, optedOut bool) {
	if _, ok := obj.(*corev1.Secret); ok && !optedOut {
		c.written[client.ObjectKeyFromObject(obj)] = true
	}
}

func (c *waitCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.wrote(obj, (&client.CreateOptions{}).ApplyOptions(opts).DisableReadYourWritesConsistency)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *waitCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.wrote(obj, (&client.PatchOptions{}).ApplyOptions(opts).DisableReadYourWritesConsistency)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *waitCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.wrote(obj, (&client.UpdateOptions{}).ApplyOptions(opts).DisableReadYourWritesConsistency)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *waitCounter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok && c.written[key] && !(&client.GetOptions{}).ApplyOptions(opts).DisableReadYourWritesConsistency {
		c.waits = append(c.waits, key)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// A pass that creates or repairs a target Secret never reads it back
// through a wait for its own write's echo: in a burst of repairs, each
// such wait held a worker for a watch round trip (make bench P4).
func TestAPassDoesNotWaitForItsOwnSecretWrite(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	w := newKCCWorld(t, kcc)
	counter := &waitCounter{Client: w.r.Client}
	w.r.Client = counter
	ctx := context.Background()
	pass := func(what string) {
		t.Helper()
		counter.written, counter.waits = map[client.ObjectKey]bool{}, nil
		w.reconcile("web")
		if len(counter.written) == 0 {
			t.Fatalf("%s: the pass wrote no Secret that a read could wait for: the test proves nothing", what)
		}
		if len(counter.waits) > 0 {
			t.Fatalf("%s: the pass read back %v, which it wrote, waiting for the echo", what, counter.waits)
		}
	}
	pass("first pass (create)")
	if err := w.client.Delete(ctx, w.secret("team-a", "web-creds")); err != nil {
		t.Fatal(err)
	}
	pass("deleted Secret re-created")
	if w.secret("team-a", "web-creds") == nil {
		t.Fatal("the deleted Secret was not re-created")
	}
}
