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

	"k8s.io/apimachinery/pkg/labels"

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
