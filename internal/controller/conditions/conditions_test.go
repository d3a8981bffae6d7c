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

package conditions

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSummaryIsTheFirstConditionNotTrue(t *testing.T) {
	set := func(conds *[]metav1.Condition, typ string, ok bool, reason string) {
		Set(conds, 1, typ, ok, reason, typ+" says "+reason)
	}
	for name, tc := range map[string]struct {
		build      func(*[]metav1.Condition)
		want       metav1.ConditionStatus
		wantReason string
	}{
		"all true: the last one's words": {func(c *[]metav1.Condition) { set(c, "A", true, "Read"); set(c, "B", true, "Synced") }, metav1.ConditionTrue, "Synced"},
		"the first false wins":           {func(c *[]metav1.Condition) { set(c, "A", false, "Down"); set(c, "B", false, "Partial") }, metav1.ConditionFalse, "Down"},
		"a later false":                  {func(c *[]metav1.Condition) { set(c, "A", true, "Read"); set(c, "B", false, "Partial") }, metav1.ConditionFalse, "Partial"},
		"one not set yet is left out":    {func(c *[]metav1.Condition) { set(c, "A", false, "Down") }, metav1.ConditionFalse, "Down"},
	} {
		t.Run(name, func(t *testing.T) {
			var conds []metav1.Condition
			tc.build(&conds)
			SetSummary(&conds, 1, "Ready", "A", "B")
			c := meta.FindStatusCondition(conds, "Ready")
			if c == nil || c.Status != tc.want || c.Reason != tc.wantReason || c.Message != messageOf(conds, c.Reason) {
				t.Fatalf("Ready = %+v, want %s %s", c, tc.want, tc.wantReason)
			}
		})
	}
	var none []metav1.Condition
	if SetSummary(&none, 1, "Ready", "A", "B") || len(none) != 0 {
		t.Fatal("a summary of nothing was set")
	}
}

func TestSummaryWithItsOwnWordsWhenAllAreTrue(t *testing.T) {
	var conds []metav1.Condition
	Set(&conds, 1, "A", true, "Read", "a")
	Set(&conds, 1, "B", true, "Synced", "b")
	SetSummaryWith(&conds, 1, "Ready", "InStep", "all in step", "A", "B")
	if c := meta.FindStatusCondition(conds, "Ready"); c.Status != metav1.ConditionTrue || c.Reason != "InStep" || c.Message != "all in step" {
		t.Fatalf("Ready = %+v, want True InStep", c)
	}
	Set(&conds, 1, "B", false, "Partial", "b failed")
	SetSummaryWith(&conds, 1, "Ready", "InStep", "all in step", "A", "B")
	if c := meta.FindStatusCondition(conds, "Ready"); c.Status != metav1.ConditionFalse || c.Reason != "Partial" || c.Message != "b failed" {
		t.Fatalf("Ready = %+v, want False Partial", c)
	}
}

// messageOf is the message of the condition (other than Ready) with reason.
func messageOf(conds []metav1.Condition, reason string) string {
	for _, c := range conds {
		if c.Type != "Ready" && c.Reason == reason {
			return c.Message
		}
	}
	return ""
}
