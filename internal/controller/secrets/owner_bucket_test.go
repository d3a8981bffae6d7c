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
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"

	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// A target Secret carries its writer's bucket, which the shard of the
// writer's namespace selects and another shard of a count dividing 256
// does not; letting the Secret go removes it with the other marks.
func TestATargetSecretCarriesItsWritersBucket(t *testing.T) {
	w := newKCCWorld(t, teamA("web", "team-a-web"))
	w.reconcile("web")
	s := w.secret("team-a", "web-creds")
	if s == nil || s.Labels[OwnerBucketLabel] != shard.Bucket("team-a") {
		t.Fatalf("target Secret labels %v, want %s=%s", s.Labels, OwnerBucketLabel, shard.Bucket("team-a"))
	}
	for i := range 4 {
		sh := shard.Shard{Index: i, Count: 4}
		if got := ManagedSecretsOf(sh).Matches(labels.Set(s.Labels)); got != sh.Owns("team-a") {
			t.Errorf("shard %v selects the Secret: %t, owns team-a: %t", sh, got, sh.Owns("team-a"))
		}
	}
	if !ManagedSecretsOf(shard.Shard{}).Matches(labels.Set{ManagedByLabel: ManagedByValue}) {
		t.Error("the whole selects a managed Secret of an earlier release, without a bucket")
	}
	// A Secret of an earlier release, without the label, gets it in the
	// next pass, without an Event (nothing changed that a user reads).
	w.drainEvents()
	delete(s.Labels, OwnerBucketLabel)
	if err := w.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	w.reconcile("web")
	if got := w.secret("team-a", "web-creds").Labels[OwnerBucketLabel]; got != shard.Bucket("team-a") {
		t.Errorf("after a pass, the earlier release's Secret has bucket %q, want %q", got, shard.Bucket("team-a"))
	}
	if evs := w.drainEvents(); len(evs) != 0 {
		t.Errorf("labelling an earlier release's Secret recorded %v, want no Event", evs)
	}
	var patch map[string]map[string]map[string]any
	_ = json.Unmarshal(releasePatch(s), &patch)
	if v, ok := patch["metadata"]["labels"][OwnerBucketLabel]; !ok || v != nil {
		t.Errorf("the release patch's labels %v: want %s removed", patch["metadata"]["labels"], OwnerBucketLabel)
	}
}

// bucketsOnly is a shard's cache: it holds the managed Secrets that carry
// a bucket label alone.
type bucketsOnly struct{ client.Client }

func (c bucketsOnly) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if s, ok := obj.(*corev1.Secret); ok && s.Labels[OwnerBucketLabel] == "" {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return nil
}

// Upgraded straight to shards: a Secret 0.1 wrote in a namespace the
// credential no longer targets has no bucket label, so no shard caches
// it; the credential's shard reads it from the API server and lets it go
// (deleted: only the operator's keys are in it). The control, the same
// cache unsharded (no fallback: one replica's cache holds such a Secret),
// leaves it.
func TestAShardLetsGoAnEarlierReleasesSecretItNoLongerTargets(t *testing.T) {
	for _, sharded := range []bool{true, false} {
		kcc := teamA("web", "team-a-web")
		kcc.Status.Targets = []secretsv1beta1.TargetStatus{{Namespace: "team-b", Synced: true}}
		old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-creds", Namespace: "team-b",
			Labels: map[string]string{ManagedByLabel: ManagedByValue, OwnerNamespaceLabel: "team-a", OwnerNameLabel: "web"}},
			Data: map[string][]byte{"id": []byte("team-a-web"), "secret": []byte("s3cr3t")}}
		w := newKCCWorld(t, kcc, old)
		w.r.Client = bucketsOnly{w.r.Client}
		if sharded {
			for i := range 2 {
				if s := (shard.Shard{Index: i, Count: 2}); s.Owns("team-a") {
					w.r.Shard = s
				}
			}
		}
		w.reconcile("web")
		if gone := w.secret("team-b", "web-creds") == nil; gone != sharded {
			t.Errorf("sharded %t: the earlier release's Secret in team-b gone: %t", sharded, gone)
		}
	}
}
