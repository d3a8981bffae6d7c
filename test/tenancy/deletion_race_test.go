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

package tenancy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// deletionRaces is how many times the deletion is raced: the interleaving
// that loses a key is one in several.
const deletionRaces = 12

// TestADeletionRacingTheTenantsWritesKeepsAnotherTeamsKeys: the tenant's
// credential writes its Secret into a namespace that consents, whose team
// adds a key of its own to it. The tenant deletes the credential while she
// keeps writing its metadata, so that the operator's release of the Secret
// meets conflicts and runs again. Every time, the other team's key stays and
// the Secret with it; only the operator's keys and marks go.
func TestADeletionRacingTheTenantsWritesKeepsAnotherTeamsKeys(t *testing.T) {
	ctx := context.Background()
	consenting := "team-c-" + appsRealm
	if err := op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consenting,
		Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: own}}}); err != nil {
		t.Fatal(err)
	}
	for i := range deletionRaces {
		k := credential(own, "race-"+strconv.Itoa(i), appsRealm, "team-a-web")
		k.Spec.Target.Namespaces = []string{consenting}
		if err := tenant.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
		// The other team's key, added to the Secret it received.
		secretKey := client.ObjectKey{Namespace: consenting, Name: k.Spec.Target.SecretName}
		if err := op.Client.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: consenting, Name: secretKey.Name}},
			client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"their-key":"theirs"}}`))); err != nil {
			t.Fatal(err)
		}

		// The tenant writes her credential's metadata throughout the deletion.
		stop := make(chan struct{})
		var writes sync.WaitGroup
		writes.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var mine secretsv1beta1.KeycloakClientCredential
				if tenant.Get(ctx, client.ObjectKeyFromObject(k), &mine) != nil {
					return
				}
				mine.Labels = map[string]string{"write": strconv.Itoa(n)}
				_ = tenant.Update(ctx, &mine) // a conflict or a 404 is part of the race
			}
		})
		if err := tenant.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
		NewWithT(t).Eventually(func() bool { return apierrors.IsNotFound(op.Client.Get(ctx, client.ObjectKeyFromObject(k), k)) }).
			WithTimeout(settle).Should(BeTrue(), "%s is never gone", k.Name)
		close(stop)
		writes.Wait()

		var s corev1.Secret
		if err := op.Client.Get(ctx, secretKey, &s); err != nil {
			t.Fatalf("race %d: the Secret holding the other team's key: %v", i, err)
		}
		if got := stringData(s.Data); !maps.Equal(got, map[string]string{"their-key": "theirs"}) {
			t.Fatalf("race %d: the Secret after the deletion holds keys %v, want the other team's alone", i, keysOf(got))
		}
		if s.Labels["app.kubernetes.io/managed-by"] != "" {
			t.Fatalf("race %d: the released Secret still carries the operator's labels %v", i, s.Labels)
		}
	}
	t.Logf("%d deletions raced with the tenant's writes: the other team's key kept every time", deletionRaces)
}

func stringData(data map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}

func keysOf(m map[string]string) string {
	return fmt.Sprint(slices.Sorted(maps.Keys(m)))
}
