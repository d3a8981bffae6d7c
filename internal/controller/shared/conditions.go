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

// Package shared holds what the controllers of both API groups share: the
// one shape of each common job — setting a condition, writing status when
// it changed, setting and releasing finalizers, mapping a list to reconcile
// requests, the backoff. The condition types and reasons are the API's
// words, and live in api/<group>/v1beta1.
package shared

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetCondition sets a condition for the object's current generation and
// reports whether anything changed.
func SetCondition(conditions *[]metav1.Condition, generation int64, typ string, ok bool, reason, message string) bool {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}

// SetSummary sets the summary condition (Ready) from the others, in order:
// false with the first one not true (its reason and message), true with the
// last one's when all are. A condition not set yet is left out. It reports
// whether anything changed.
func SetSummary(conditions *[]metav1.Condition, generation int64, summary string, of ...string) bool {
	return SetSummaryWith(conditions, generation, summary, "", "", of...)
}

// SetSummaryWith is SetSummary with the reason and message the summary
// carries when all are true (the last one's when empty).
func SetSummaryWith(conditions *[]metav1.Condition, generation int64, summary, reasonTrue, messageTrue string, of ...string) bool {
	var last *metav1.Condition
	for _, typ := range of {
		c := meta.FindStatusCondition(*conditions, typ)
		if c == nil {
			continue
		}
		if c.Status != metav1.ConditionTrue {
			return SetCondition(conditions, generation, summary, false, c.Reason, c.Message)
		}
		last = c
	}
	if last == nil {
		return false
	}
	if reasonTrue == "" {
		reasonTrue, messageTrue = last.Reason, last.Message
	}
	return SetCondition(conditions, generation, summary, true, reasonTrue, messageTrue)
}
