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
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func TestDecideStatus(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	synced := func(ns string) secretsv1beta1.TargetStatus {
		return secretsv1beta1.TargetStatus{Namespace: ns, Synced: true, Reason: secretsv1beta1.ReasonSynced}
	}
	refused := func(ns string) secretsv1beta1.TargetStatus {
		return secretsv1beta1.TargetStatus{Namespace: ns, Reason: secretsv1beta1.ReasonTargetNotAllowed, Message: "no consent"}
	}
	down := &sourceError{reason: secretsv1beta1.ReasonKeycloakUnavailable, err: errors.New("Keycloak does not answer"), retry: true}
	// inStep is the status of a pass that found everything in step.
	inStep := func() *secretsv1beta1.KeycloakClientCredential {
		k := teamA("web", "team-a-web")
		k.Generation = 2
		k.Status.ObservedGeneration = 2
		k.Status.LastSyncTime = &earlier
		k.Status.Targets = []secretsv1beta1.TargetStatus{synced("team-a")}
		st, _ := decideStatus(k, k.Status.DeepCopy(), outcome{targets: k.Status.Targets}, now.Add(-time.Hour))
		k.Status = st
		return k
	}
	for name, tc := range map[string]struct {
		kcc         *secretsv1beta1.KeycloakClientCredential
		out         outcome
		ready       metav1.ConditionStatus
		reason      string
		syncedAt    *metav1.Time
		observed    int64
		wantWarning bool
	}{
		"in step, nothing new: the last sync time stays": {kcc: inStep(), out: outcome{targets: []secretsv1beta1.TargetStatus{synced("team-a")}},
			ready: metav1.ConditionTrue, reason: secretsv1beta1.ReasonSynced, syncedAt: &earlier, observed: 2},
		"a new target in step: the last sync time moves": {kcc: inStep(), out: outcome{targets: []secretsv1beta1.TargetStatus{synced("team-a"), synced("team-b")}},
			ready: metav1.ConditionTrue, reason: secretsv1beta1.ReasonSynced, syncedAt: &metav1.Time{Time: now}, observed: 2},
		"one target of two refused": {kcc: inStep(), out: outcome{targets: []secretsv1beta1.TargetStatus{synced("team-a"), refused("team-b")}},
			ready: metav1.ConditionFalse, reason: secretsv1beta1.ReasonPartiallySynced, syncedAt: &earlier, observed: 2},
		"every target refused: their reason": {kcc: inStep(), out: outcome{targets: []secretsv1beta1.TargetStatus{refused("team-b")}},
			ready: metav1.ConditionFalse, reason: secretsv1beta1.ReasonTargetNotAllowed, syncedAt: &earlier, observed: 2},
		"Keycloak down: Ready says so, a Warning, the rest kept": {kcc: inStep(), out: outcome{source: down},
			ready: metav1.ConditionFalse, reason: secretsv1beta1.ReasonKeycloakUnavailable, syncedAt: &earlier, observed: 2, wantWarning: true},
		"a spec change while Keycloak is down is not observed": {kcc: func() *secretsv1beta1.KeycloakClientCredential { k := inStep(); k.Generation = 3; return k }(),
			out: outcome{source: down}, ready: metav1.ConditionFalse, reason: secretsv1beta1.ReasonKeycloakUnavailable, syncedAt: &earlier, observed: 2, wantWarning: true},
	} {
		t.Run(name, func(t *testing.T) {
			before := tc.kcc.Status.DeepCopy()
			st, warn := decideStatus(tc.kcc, before, tc.out, now)
			ready := meta.FindStatusCondition(st.Conditions, secretsv1beta1.TypeReady)
			if ready == nil || ready.Status != tc.ready || ready.Reason != tc.reason {
				t.Fatalf("Ready = %+v, want %s %s", ready, tc.ready, tc.reason)
			}
			if !st.LastSyncTime.Equal(tc.syncedAt) || st.ObservedGeneration != tc.observed {
				t.Fatalf("lastSyncTime %v, observedGeneration %d; want %v, %d", st.LastSyncTime, st.ObservedGeneration, tc.syncedAt, tc.observed)
			}
			if (warn != nil) != tc.wantWarning {
				t.Fatalf("warning %+v, want one: %v", warn, tc.wantWarning)
			}
			// The same failure again is not news.
			if tc.wantWarning {
				tc.kcc.Status = st
				if _, again := decideStatus(tc.kcc, st.DeepCopy(), tc.out, now); again != nil {
					t.Fatalf("the same failure warned twice: %+v", again)
				}
			}
		})
	}
}
