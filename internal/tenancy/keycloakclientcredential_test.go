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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

func TestARotationsConsumersAreCheckedFieldByField(t *testing.T) {
	for _, tt := range []struct {
		name      string
		consumers secretsv1beta1.RotationConsumers
		want      string
	}{
		{"a named workload", secretsv1beta1.RotationConsumers{Workloads: []secretsv1beta1.WorkloadReference{{Kind: "Deployment", Name: "api"}}}, ""},
		{"discovered", secretsv1beta1.RotationConsumers{Discover: true}, ""},
		{"nothing to restart", secretsv1beta1.RotationConsumers{RolloutTimeout: &metav1.Duration{Duration: time.Hour}},
			"spec.rotation.consumers: Required value: name workloads, a selector, or discover: true"},
		{"a bad selector", secretsv1beta1.RotationConsumers{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}},
			"spec.rotation.consumers.selector: Invalid value"},
		{"too short a timeout", secretsv1beta1.RotationConsumers{Discover: true, RolloutTimeout: &metav1.Duration{Duration: 10 * time.Second}},
			"spec.rotation.consumers.rolloutTimeout: Invalid value: \"10s\": must be between 1m0s and 24h0m0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			consumers := tt.consumers
			errs := validateRotation(field.NewPath("spec", "rotation"), &secretsv1beta1.RotationSpec{Consumers: &consumers})
			got := errs.ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Fatalf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Fatalf("errors %v, want %q", got, tt.want)
			}
		})
	}
}
