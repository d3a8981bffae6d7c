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

package keycloak_test

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/controller/shared"
)

// repairTarget is the performance target of issue #4: a target Secret
// edited or deleted by hand is repaired within a second.
const repairTarget = time.Second

// BenchmarkTargetSecretRepair measures how long the operator takes to
// repair a target Secret edited or deleted by hand — from the API server's
// answer to the edit until the Secret holds the client's secret again — and
// fails when the mean exceeds repairTarget. The refresh is an hour away:
// only the watch on owned Secrets can make it this quick.
func BenchmarkTargetSecretRepair(b *testing.B) {
	ctx := context.Background()
	ns := op.NewNamespace(b, nil)
	server := newServer(b, kc, ns)
	kcc := credential(ns, "bench", server, newClientID(b, ""))
	kcc.Spec.RefreshInterval = &metav1.Duration{Duration: time.Hour}
	if err := op.Client.Create(ctx, kcc); err != nil {
		b.Fatal(err)
	}
	waitCredential(b, client.ObjectKeyFromObject(kcc), shared.TypeReady, metav1.ConditionTrue, shared.ReasonSynced, readyWithin)
	key := client.ObjectKey{Namespace: ns, Name: "bench-creds"}
	good := secretOf(b, ns, key.Name).Data

	for _, c := range []struct {
		name  string
		spoil func(*corev1.Secret) error
	}{
		{"edited", func(s *corev1.Secret) error {
			s.Data["secret"] = []byte("tampered")
			return op.Client.Update(ctx, s)
		}},
		{"deleted", func(s *corev1.Secret) error { return op.Client.Delete(ctx, s) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			var n int
			for b.Loop() {
				if err := c.spoil(secretOf(b, ns, key.Name)); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for {
					var s corev1.Secret
					if err := op.Client.Get(ctx, key, &s); err == nil && maps.EqualFunc(s.Data, good, func(a, b []byte) bool { return string(a) == string(b) }) {
						break
					}
					if time.Since(start) > 30*time.Second {
						b.Fatalf("Secret %s not repaired within 30s", key)
					}
					time.Sleep(5 * time.Millisecond)
				}
				total += time.Since(start)
				n++
			}
			mean := total / time.Duration(n)
			b.ReportMetric(float64(mean.Milliseconds()), "ms/repair")
			if mean > repairTarget {
				b.Errorf("a %s Secret is repaired in %s on average; the target is %s", c.name, mean, repairTarget)
			}
		})
	}
}
