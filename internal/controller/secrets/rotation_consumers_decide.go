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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// The consumers' part of the rotation's decisions, pure and table-tested.

// consumersOf is the spec's consumers, nil when it names none.
func consumersOf(kcc *secretsv1beta1.KeycloakClientCredential) *secretsv1beta1.RotationConsumers {
	if r := kcc.Spec.Rotation; r != nil {
		return r.Consumers
	}
	return nil
}

// consumersPending: the rotation waits for its consumers: not restarted
// yet, or one still rolling out before the deadline.
func consumersPending(kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus, now time.Time) bool {
	if consumersOf(kcc) == nil {
		return false
	}
	if rot.ConsumersDeadline == nil {
		return true
	}
	return len(consumersIn(rot, secretsv1beta1.ConsumerRollingOut)) > 0 && now.Before(rot.ConsumersDeadline.Time)
}

// consumersIn names the rotation's consumers in state.
func consumersIn(rot *secretsv1beta1.RotationStatus, state string) []string {
	var names []string
	for _, c := range rot.Consumers {
		if c.State == state {
			names = append(names, consumerName(c))
		}
	}
	return names
}

// timeOutConsumers marks the consumers still rolling out when the previous
// secret is invalidated, and says so in a Warning naming them.
func timeOutConsumers(kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus) (notice, bool) {
	late := consumersIn(rot, secretsv1beta1.ConsumerRollingOut)
	if len(late) == 0 {
		return notice{}, false
	}
	for i := range rot.Consumers {
		if c := &rot.Consumers[i]; c.State == secretsv1beta1.ConsumerRollingOut {
			c.State = secretsv1beta1.ConsumerTimedOut
		}
	}
	return notice{corev1.EventTypeWarning, secretsv1beta1.ReasonConsumersTimedOut,
		fmt.Sprintf("the previous secret of client %q was invalidated before %s rolled out (spec.rotation.consumers.rolloutTimeout): their pods still on it fail to log in until they restart",
			kcc.Spec.Source.ClientID, strings.Join(late, ", "))}, true
}

// consumersMessage says how the consumers' rollouts stand, for the
// RotationReady condition in the grace period.
func consumersMessage(rot *secretsv1beta1.RotationStatus) string {
	if rot.ConsumersDeadline == nil {
		return "; restarting the consumers"
	}
	if len(rot.Consumers) == 0 {
		return "; no consumer found to restart"
	}
	done := 0
	for _, c := range rot.Consumers {
		if c.State != secretsv1beta1.ConsumerRollingOut {
			done++
		}
	}
	return fmt.Sprintf("; %d of %d consumer(s) rolled out (waiting until %s at the latest)", done, len(rot.Consumers), rot.ConsumersDeadline.UTC().Format(time.RFC3339))
}
