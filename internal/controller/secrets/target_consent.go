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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// Whether a target namespace takes the credential's Secret: asked before
// each write, and before its workloads are restarted.

// targetProblem is why a target namespace gets no Secret: the reason, its
// message, and the error to retry with (nil for a refusal).
type targetProblem struct {
	reason, msg string
	err         error
}

// targetRefusal says why the credential may not write into namespace ns
// (no consent, a Secret type it refuses), or that its namespace could not
// be read; nil when it may.
func (r *KeycloakClientCredentialReconciler) targetRefusal(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string) *targetProblem {
	var namespace corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		return &targetProblem{secretsv1beta1.ReasonTargetFailed, "read namespace: " + err.Error(), client.IgnoreNotFound(err)}
	}
	if !tenancy.ConsentsTo(&namespace, kcc.Namespace) {
		return &targetProblem{secretsv1beta1.ReasonTargetNotAllowed, fmt.Sprintf("namespace %s does not consent: its %s annotation does not list %q",
			ns, tenancy.AllowedSourceNamespacesAnnotation, kcc.Namespace), nil}
	}
	if msg := tenancy.SecretTypeRefusal(&namespace, kcc.Spec.Target.Type); msg != "" {
		return &targetProblem{secretsv1beta1.ReasonTargetNotAllowed, msg, nil}
	}
	return nil
}
