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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// staleView is a cache that has not seen the last status write of one
// resource yet: it shows the resource as it was.
type staleView struct {
	client.Client
	old *secretsv1beta1.KeycloakClientCredential
}

func (v staleView) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if k, ok := obj.(*secretsv1beta1.KeycloakClientCredential); ok && key == client.ObjectKeyFromObject(v.old) {
		v.old.DeepCopyInto(k)
		return nil
	}
	return v.Client.Get(ctx, key, obj, opts...)
}

// A pass queued again (the watch event of the Secret it just created came
// before it was known as its own) that reads the resource from before its
// own status write waits for the cache instead of failing on the conflict,
// and asks Keycloak nothing; once the cache caught up, the pass finds
// everything in step.
func TestAPassFromBeforeItsOwnStatusWriteWaits(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	kcc.Finalizers = []string{CredentialFinalizer} // as the webhook creates it
	w := newKCCWorld(t, kcc)
	ctx := context.Background()
	var old secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(ctx, client.ObjectKeyFromObject(kcc), &old); err != nil {
		t.Fatal(err)
	}
	w.reconcile("web") // the Secret created, the status written
	if c := w.ready("web"); c == nil || c.Status != "True" {
		t.Fatalf("first pass: Ready %v", c)
	}
	calls := len(w.kc.Calls)

	fresh := w.r.Client
	w.r.Client = staleView{Client: fresh, old: &old}
	res, err := w.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(kcc)})
	if err != nil || res.RequeueAfter != staleStatusRetry {
		t.Fatalf("a pass from a stale cache: %v, requeue after %s; want no error and a look again after %s", err, res.RequeueAfter, staleStatusRetry)
	}
	if len(w.kc.Calls) != calls {
		t.Errorf("a pass from a stale cache asked Keycloak: %v", w.kc.Calls[calls:])
	}

	w.r.Client = fresh
	before := w.ready("web")
	if _, err := w.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(kcc)}); err != nil {
		t.Fatalf("the pass once the cache caught up: %v", err)
	}
	if after := w.ready("web"); after.LastTransitionTime != before.LastTransitionTime || after.Message != before.Message {
		t.Errorf("the pass once the cache caught up changed Ready: %v → %v", before, after)
	}
	if w.r.statuses.stale(client.ObjectKeyFromObject(kcc), old.ResourceVersion) {
		t.Error("the record of the status write outlived the cache catching up")
	}
}
