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
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Events follow the status they report: a pass whose status write fails
// (a conflict) records the Secret it wrote, and not the refusal of a
// namespace that does not consent, which the next pass reports again and
// records once, after its write.
func TestCredentialEventsFollowTheStatusWrite(t *testing.T) {
	k := teamA("web", "team-a-web")
	k.Spec.Target.Namespaces = []string{"team-a", "team-b"} // team-b does not consent
	w := newKCCWorld(t, k)
	var conflicts atomic.Int32
	conflicts.Store(1)
	w.r.Client = cachedView{interceptor.NewClient(w.client.(client.WithWatch), interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if conflicts.Add(-1) >= 0 {
				return apierrors.NewConflict(secretsv1beta1.GroupVersion.WithResource("keycloakclientcredentials").GroupResource(), obj.GetName(), errors.New("changed meanwhile"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}})}
	recorded := func() []string {
		var got []string
		for {
			select {
			case e := <-w.events.Events:
				f := strings.Fields(e)
				got = append(got, f[0]+" "+f[1])
			default:
				return got
			}
		}
	}
	for i, want := range [][]string{
		{"Normal Created"},           // the status write fails
		{"Warning TargetNotAllowed"}, // written
		nil,                          // nothing new
	} {
		w.reconcile("web")
		if got := recorded(); !slices.Equal(got, want) {
			t.Fatalf("pass %d recorded %q, want %q", i+1, got, want)
		}
	}
	if c := w.ready("web"); c == nil || c.Reason != secretsv1beta1.ReasonPartiallySynced {
		t.Fatalf("Ready = %+v, want PartiallySynced", c)
	}
}
