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
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// Labels and annotations that mark a Secret as written by the operator for
// one KeycloakClientCredential. The manager's cache holds only Secrets with
// ManagedByLabel, so the operator watches its own Secrets and nothing else.
const (
	ManagedByLabel      = "app.kubernetes.io/managed-by"
	ManagedByValue      = "vault-keycloak-operator"
	OwnerNamespaceLabel = "secrets.carbogame.com/owner-namespace"
	OwnerNameLabel      = "secrets.carbogame.com/owner-name"
	// DataHashAnnotation is a digest of the data the operator last wrote:
	// data that no longer matches it was edited by someone else (drift),
	// while matching data that differs from Keycloak means a new secret.
	DataHashAnnotation = "secrets.carbogame.com/data-hash"
)

// ManagedSecrets selects every Secret the operator manages.
func ManagedSecrets() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByValue})
}

// ownedBy selects the Secrets written for one KeycloakClientCredential.
func ownedBy(kcc *secretsv1beta1.KeycloakClientCredential) labels.Set {
	return labels.Set{ManagedByLabel: ManagedByValue, OwnerNamespaceLabel: kcc.Namespace, OwnerNameLabel: kcc.Name}
}

// isOwnedBy reports whether the Secret was written for this resource.
func isOwnedBy(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential) bool {
	return labels.SelectorFromSet(ownedBy(kcc)).Matches(labels.Set(s.Labels))
}

// desiredData maps the values to the Secret keys of the spec.
func desiredData(kcc *secretsv1beta1.KeycloakClientCredential, clientID, secret, issuer, tokenURL string) map[string][]byte {
	keys := kcc.Spec.Target.Keys
	data := map[string][]byte{}
	for key, value := range map[string]string{keys.ClientID: clientID, keys.ClientSecret: secret, keys.IssuerURL: issuer, keys.TokenURL: tokenURL} {
		if key != "" {
			data[key] = []byte(value)
		}
	}
	return data
}

// dataHash is a digest of a Secret's data, in key order.
func dataHash(data map[string][]byte) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write(data[k])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// newTargetSecret is the Secret to create in namespace.
func newTargetSecret(kcc *secretsv1beta1.KeycloakClientCredential, namespace string, data map[string][]byte) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kcc.Spec.Target.SecretName, Namespace: namespace},
		Type:       kcc.Spec.Target.Type,
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	applyDesired(s, kcc, data)
	return s
}

// applyDesired sets what the operator owns on a Secret: its data, the
// spec's labels and annotations, and the ownership marks. Labels and
// annotations that others added (tools, admins) are kept. It reports
// whether anything changed.
func applyDesired(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) bool {
	before := s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	maps.Copy(s.Labels, kcc.Spec.Target.Labels)
	maps.Copy(s.Labels, ownedBy(kcc))
	maps.Copy(s.Annotations, kcc.Spec.Target.Annotations)
	s.Annotations[DataHashAnnotation] = dataHash(data)
	s.Data = data
	return !maps.Equal(before.Labels, s.Labels) || !maps.Equal(before.Annotations, s.Annotations) || !dataEqual(before.Data, s.Data)
}

func dataEqual(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}
