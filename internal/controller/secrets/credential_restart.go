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

// The phase of a pass after distribution: the workloads of a secret that
// changed outside this resource's rotation are restarted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
)

// restartOnChange restarts the consumers of the namespaces whose client
// secret changed outside this resource's rotation (regenerated in Keycloak
// by hand, or by another resource's rotation): they are not waited for.
// The restart's value is the new data's digest, so that a pass that
// repeats the change restarts nothing more.
func (r *KeycloakClientCredentialReconciler) restartOnChange(ctx context.Context, sc *scope, namespaces []string, data map[string][]byte) ([]notice, error) {
	kcc := sc.kcc
	if consumersOf(kcc) == nil || len(namespaces) == 0 {
		return nil, nil
	}
	found, _, err := r.findConsumers(ctx, kcc)
	value := "secret-" + dataHash(data)[:16]
	var names []string
	for _, w := range found {
		if !slices.Contains(namespaces, w.obj.GetNamespace()) || rollout.PodTemplate(w.obj).Annotations[rollout.RestartedAtAnnotation] == value {
			continue
		}
		c := secretsv1beta1.ConsumerStatus{Kind: w.kind, Namespace: w.obj.GetNamespace(), Name: w.obj.GetName()}
		if restartErr := r.restartConsumer(ctx, value, w.obj, &c, r.now()); restartErr != nil {
			err = errors.Join(err, restartErr)
			continue
		}
		names = append(names, consumerName(c))
	}
	if len(names) == 0 {
		return nil, err
	}
	return []notice{{corev1.EventTypeNormal, secretsv1beta1.ReasonConsumersRestarted,
		fmt.Sprintf("the secret of client %q changed in Keycloak outside this resource's rotation: restarted %s", kcc.Spec.Source.ClientID, strings.Join(names, ", "))}}, err
}
