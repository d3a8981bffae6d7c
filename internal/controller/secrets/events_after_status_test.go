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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Events follow the status they report: a pass whose status write fails
// (a conflict) records what it did outside the cluster (a Secret written,
// a secret regenerated in Keycloak), and not what the next pass reports
// again (a namespace that does not consent), which that pass records once,
// after its write.
func TestCredentialEventsFollowTheStatusWrite(t *testing.T) {
	refusing := teamA("web", "team-a-web")
	refusing.Spec.Target.Namespaces = []string{"team-a", "team-b"} // team-b does not consent
	rotating := teamA("rot", "team-a-rot")
	rotating.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
	rotating.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour)) // due
	for name, tc := range map[string]struct {
		kcc    *secretsv1beta1.KeycloakClientCredential
		passes [][]string
		ready  string
	}{
		"a namespace that does not consent": {kcc: refusing, ready: secretsv1beta1.ReasonPartiallySynced, passes: [][]string{
			{"Normal Created"},           // the status write fails
			{"Warning TargetNotAllowed"}, // written
			nil,                          // nothing new
		}},
		"a scheduled rotation": {kcc: rotating, ready: secretsv1beta1.ReasonSynced, passes: [][]string{
			{"Normal Created", "Normal Rotated"}, // the Secret written, the secret regenerated in Keycloak; the status write fails
			{"Normal RotationDistributed"},       // written: every target holds the new secret
		}},
	} {
		t.Run(name, func(t *testing.T) {
			w := newKCCWorld(t, tc.kcc)
			var conflicts atomic.Int32
			conflicts.Store(1)
			w.r.Client = cachedView{interceptor.NewClient(w.client.(client.WithWatch), interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if conflicts.Add(-1) >= 0 {
						return apierrors.NewConflict(secretsv1beta1.GroupVersion.WithResource("keycloakclientcredentials").GroupResource(), obj.GetName(), errors.New("changed meanwhile"))
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}})}
			for i, want := range tc.passes {
				w.reconcile(tc.kcc.Name)
				if got := recordedEvents(w); !slices.Equal(got, want) {
					t.Fatalf("pass %d recorded %q, want %q", i+1, got, want)
				}
			}
			if c := w.ready(tc.kcc.Name); c == nil || c.Reason != tc.ready {
				t.Fatalf("Ready = %+v, want %s", c, tc.ready)
			}
		})
	}
}

// recordedEvents is the type and reason of every Event waiting, in order.
func recordedEvents(w *kccWorld) []string {
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
