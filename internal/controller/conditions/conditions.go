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

// Package conditions sets the controllers' conditions (Ready as the
// summary of the others) and writes a status once, only when it changed.
// The condition types and reasons are the API's words: api/<group>/v1beta1.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Set sets a condition for the object's current generation and
// reports whether anything changed.
func Set(conditions *[]metav1.Condition, generation int64, typ string, ok bool, reason, message string) bool {
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
			return Set(conditions, generation, summary, false, c.Reason, c.Message)
		}
		last = c
	}
	if last == nil {
		return false
	}
	if reasonTrue == "" {
		reasonTrue, messageTrue = last.Reason, last.Message
	}
	return Set(conditions, generation, summary, true, reasonTrue, messageTrue)
}
