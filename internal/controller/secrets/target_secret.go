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
	"strings"

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
	// ManagedKeysAnnotation lists the data keys the operator wrote,
	// comma-separated: it compares and changes those alone, and leaves keys
	// that others added to the Secret.
	ManagedKeysAnnotation = "secrets.carbogame.com/managed-keys"
	// OwnerUIDAnnotation is the UID of the KeycloakClientCredential the
	// Secret was written for. Labels name an owner; the UID tells that very
	// resource from an earlier one of the same name (or a copied Secret).
	OwnerUIDAnnotation = "secrets.carbogame.com/owner-uid"
)

// ManagedSecrets selects every Secret the operator manages.
func ManagedSecrets() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByValue})
}

// ownedBy selects the Secrets written for one KeycloakClientCredential.
func ownedBy(kcc *secretsv1beta1.KeycloakClientCredential) labels.Set {
	return labels.Set{ManagedByLabel: ManagedByValue, OwnerNamespaceLabel: kcc.Namespace, OwnerNameLabel: kcc.Name}
}

// isOwnedBy reports whether the Secret was written for this resource. Labels
// alone prove nothing — anyone who may create a Secret can copy them — so it
// must also carry the resource's UID, or, written before the UID was
// recorded (0.1), lie in a namespace the status says was written to.
func isOwnedBy(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, status *secretsv1beta1.KeycloakClientCredentialStatus) bool {
	if !labels.SelectorFromSet(ownedBy(kcc)).Matches(labels.Set(s.Labels)) {
		return false
	}
	if uid, recorded := s.Annotations[OwnerUIDAnnotation]; recorded {
		return uid == string(kcc.UID)
	}
	return slices.ContainsFunc(status.Targets, func(t secretsv1beta1.TargetStatus) bool { return t.Namespace == s.Namespace && t.Synced })
}

// foreignKeys are the keys of data that s already holds and the operator did
// not write: taking them over would overwrite (and later delete) what a tool
// or a person put there.
func foreignKeys(s *corev1.Secret, data map[string][]byte) []string {
	mine := managedKeys(s)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if _, exists := s.Data[k]; exists && !slices.Contains(mine, k) {
			out = append(out, k)
		}
	}
	return out
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

// managedKeys are the data keys the operator wrote to s. A Secret written
// before the annotation existed was written whole by the operator.
func managedKeys(s *corev1.Secret) []string {
	if list, ok := s.Annotations[ManagedKeysAnnotation]; ok {
		if list == "" {
			return nil
		}
		return strings.Split(list, ",")
	}
	return slices.Sorted(maps.Keys(s.Data))
}

// managedData is the part of s's data that the operator wrote.
func managedData(s *corev1.Secret) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range managedKeys(s) {
		if v, ok := s.Data[k]; ok {
			out[k] = v
		}
	}
	return out
}

// edited reports whether someone changed the keys the operator wrote since
// it last wrote them.
func edited(s *corev1.Secret) bool {
	return s.Annotations[DataHashAnnotation] != dataHash(managedData(s))
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

// applyDesired sets what the operator owns on a Secret: the data keys it
// writes, the spec's labels and annotations, and the ownership marks. Data
// keys, labels and annotations that others added (tools, admins) are kept;
// a key the operator wrote before and no longer writes is removed. It
// reports whether anything changed.
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
	for _, k := range managedKeys(s) {
		if _, keep := data[k]; !keep {
			delete(s.Data, k)
		}
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	maps.Copy(s.Data, data)
	s.Annotations[ManagedKeysAnnotation] = strings.Join(slices.Sorted(maps.Keys(data)), ",")
	s.Annotations[DataHashAnnotation] = dataHash(data)
	if kcc.UID != "" {
		s.Annotations[OwnerUIDAnnotation] = string(kcc.UID)
	}
	return !maps.Equal(before.Labels, s.Labels) || !maps.Equal(before.Annotations, s.Annotations) || !dataEqual(before.Data, s.Data)
}

func dataEqual(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}
