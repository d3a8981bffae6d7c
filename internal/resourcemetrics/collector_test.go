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

package resourcemetrics

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

func ready(status metav1.ConditionStatus, reason string) []metav1.Condition {
	return []metav1.Condition{{Type: "Ready", Status: status, Reason: reason}}
}

func TestTheGaugeCountsByKindNamespaceAndReadyReason(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = vaultv1beta1.AddToScheme(scheme)
	_ = secretsv1beta1.AddToScheme(scheme)
	app := func(ns, name string, conds []metav1.Condition) client.Object {
		return &vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: vaultv1beta1.VaultAppStatus{Conditions: conds}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		app("shop", "a", ready(metav1.ConditionTrue, "Synced")),
		app("shop", "b", ready(metav1.ConditionTrue, "Synced")),
		app("shop", "c", ready(metav1.ConditionFalse, "NotAllowed")),
		app("api", "d", nil), // not reported yet
		&secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Namespace: "api", Name: "k"},
			Status: secretsv1beta1.KeycloakClientCredentialStatus{Conditions: ready(metav1.ConditionFalse, "KeycloakUnavailable")}},
		&secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "kc"},
			Status: secretsv1beta1.KeycloakServerStatus{Conditions: []metav1.Condition{{Type: "Connected", Status: metav1.ConditionTrue, Reason: "Connected"}}}},
	).Build()
	elected := make(chan struct{})
	Use(c, elected, shard.Shard{})
	defer source.Store(nil)
	if got := gather(t); len(got) != 0 {
		t.Fatalf("a standby reported %v: only the leader reports", got)
	}
	close(elected)
	want := map[string]float64{
		"KeycloakClientCredential/api/False/KeycloakUnavailable": 1,
		"KeycloakServer//True/Connected":                         1,
		"VaultApp/shop/False/NotAllowed":                         1,
		"VaultApp/shop/True/Synced":                              2,
		"VaultApp/api/Unknown/":                                  1,
	}
	if got := gather(t); !maps.Equal(got, want) {
		t.Fatalf("series:\n%v\nwant:\n%v", got, want)
	}

	// The leaders of two shards report the VaultApps and credentials of
	// their own namespaces (shop is shard 0's, api shard 1's), and shard 0
	// the servers: together, the same series, none twice.
	union := map[string]float64{}
	for i := range 2 {
		Use(c, elected, shard.Shard{Index: i, Count: 2})
		for k, v := range gather(t) {
			if _, twice := union[k]; twice {
				t.Errorf("%s reported by both shards", k)
			}
			if strings.HasPrefix(k, "KeycloakServer/") && i != 0 {
				t.Errorf("%s reported by shard %d, want shard 0 alone", k, i)
			}
			if strings.HasPrefix(k, "KeycloakClientCredential/api/") && i != 1 {
				t.Errorf("%s reported by shard %d, want api's, shard 1", k, i)
			}
			union[k] = v
		}
	}
	if !maps.Equal(union, want) {
		t.Fatalf("series of both shards:\n%v\nwant:\n%v", union, want)
	}
}

// gather is the gauge's series as kind/namespace/ready/reason → value.
func gather(t *testing.T) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector{})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["kind"]+"/"+labels["namespace"]+"/"+labels["ready"]+"/"+labels["reason"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestNothingIsReportedBeforeTheManagerIsSetUp(t *testing.T) {
	source.Store(nil)
	if got := gather(t); len(got) != 0 {
		t.Fatalf("series %v, want none", got)
	}
}

func TestOverdueRotationsByNamespace(t *testing.T) {
	now := time.Now()
	kcc := func(ns string, interval time.Duration, last time.Duration, phase string) secretsv1beta1.KeycloakClientCredential {
		k := secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Namespace: ns, CreationTimestamp: metav1.NewTime(now.Add(-48 * time.Hour))}}
		if interval > 0 {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: interval}}
		}
		at := metav1.NewTime(now.Add(-last))
		k.Status.LastRotationTime = &at
		if phase != "" {
			k.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: phase}
		}
		return k
	}
	list := &secretsv1beta1.KeycloakClientCredentialList{Items: []secretsv1beta1.KeycloakClientCredential{
		kcc("shop", time.Hour, 2*time.Hour, ""),                                 // overdue
		kcc("shop", time.Hour, 2*time.Hour, secretsv1beta1.RotationGracePeriod), // under way
		kcc("shop", time.Hour, 2*time.Hour, secretsv1beta1.RotationCompleted),   // overdue again
		kcc("web", 24*time.Hour, time.Hour, ""),                                 // not due
		kcc("none", 0, time.Hour, ""),                                           // no schedule
	}}
	got := Overdue(list, now)
	if want := map[string]int{"shop": 2, "web": 0}; !maps.Equal(got, want) {
		t.Fatalf("overdue %v, want %v", got, want)
	}
}

func TestRotationsWaitingForConsumersByNamespace(t *testing.T) {
	now := time.Now()
	kcc := func(ns string, consumers bool, graceLeft time.Duration, states ...string) secretsv1beta1.KeycloakClientCredential {
		k := secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
		k.Spec.Rotation = &secretsv1beta1.RotationSpec{}
		if consumers {
			k.Spec.Rotation.Consumers = &secretsv1beta1.RotationConsumers{Discover: true}
		}
		ends := metav1.NewTime(now.Add(graceLeft))
		k.Status.Rotation = &secretsv1beta1.RotationStatus{Phase: secretsv1beta1.RotationGracePeriod, GraceEndsTime: &ends}
		for _, s := range states {
			k.Status.Rotation.Consumers = append(k.Status.Rotation.Consumers, secretsv1beta1.ConsumerStatus{State: s})
		}
		return k
	}
	list := &secretsv1beta1.KeycloakClientCredentialList{Items: []secretsv1beta1.KeycloakClientCredential{
		kcc("shop", true, -time.Minute, secretsv1beta1.ConsumerRolledOut, secretsv1beta1.ConsumerRollingOut), // waiting
		kcc("shop", true, time.Minute, secretsv1beta1.ConsumerRollingOut),                                    // in its grace
		kcc("web", true, -time.Minute, secretsv1beta1.ConsumerRolledOut),                                     // done
		kcc("none", false, -time.Minute),                                                                     // no consumers
	}}
	if got, want := WaitingForConsumers(list, now), map[string]int{"shop": 1, "web": 0}; !maps.Equal(got, want) {
		t.Fatalf("waiting %v, want %v", got, want)
	}
}
