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
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
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
	// Secret was written for. It is a hint, never a proof (a copy carries
	// it too): it decides only whether a Secret the status does not record
	// may be adopted (isAdoptable).
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

// recordedUID is the UID the status records for the Secret namespace/name.
func recordedUID(status *secretsv1beta1.KeycloakClientCredentialStatus, namespace, name string) (types.UID, bool) {
	for _, w := range status.Secrets {
		if w.Namespace == namespace && w.Name == name {
			return w.UID, true
		}
	}
	return "", false
}

// isOwnedBy reports whether s is a Secret the operator wrote for this
// resource: its UID is recorded in the resource's status, which tenants
// cannot write. Labels and annotations prove nothing — `kubectl get -o yaml`
// and `create` under another name copy them — and a copy never has the UID.
func isOwnedBy(s *corev1.Secret, status *secretsv1beta1.KeycloakClientCredentialStatus) bool {
	uid, ok := recordedUID(status, s.Namespace, s.Name)
	return ok && uid == s.UID
}

// isAdoptable is the one rule by which the operator takes a Secret it has
// not recorded as its own (docs/design.md, "Which Secrets are the
// operator's"): it covers the Secrets of releases that recorded no UID, and
// a Secret created just before the status write that would have recorded
// it failed (or the manager stopped). The Secret must
//   - sit at this resource's own target: spec.target.secretName in a target
//     namespace, or in a namespace the status reports synced;
//   - be recorded nowhere at that place: once a UID is recorded there, a
//     Secret that replaced it (a copy made after a deletion) is not adopted;
//   - carry the owner labels and this resource's UID in the owner-uid
//     annotation, or, written by 0.1 before that annotation existed, no
//     owner-uid at all in a namespace the status reports synced.
//
// A copy under another name or in another namespace never qualifies.
func isAdoptable(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, status *secretsv1beta1.KeycloakClientCredentialStatus) bool {
	if s.Name != kcc.Spec.Target.SecretName || !labels.SelectorFromSet(ownedBy(kcc)).Matches(labels.Set(s.Labels)) {
		return false
	}
	if _, recorded := recordedUID(status, s.Namespace, s.Name); recorded {
		return false
	}
	synced := wasSynced(status, s.Namespace)
	if !synced && !slices.Contains(tenancy.TargetNamespaces(kcc), s.Namespace) {
		return false
	}
	if uid, marked := s.Annotations[OwnerUIDAnnotation]; marked {
		return uid == string(kcc.UID)
	}
	return synced
}

// record sets the Secret of one place in the status's list of written Secrets.
func record(status *secretsv1beta1.KeycloakClientCredentialStatus, s *corev1.Secret) {
	forget(status, s.Namespace, s.Name)
	status.Secrets = append(status.Secrets, secretsv1beta1.WrittenSecret{Namespace: s.Namespace, Name: s.Name, UID: s.UID})
	slices.SortFunc(status.Secrets, func(a, b secretsv1beta1.WrittenSecret) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

// forget drops the record of one place.
func forget(status *secretsv1beta1.KeycloakClientCredentialStatus, namespace, name string) {
	status.Secrets = slices.DeleteFunc(status.Secrets, func(w secretsv1beta1.WrittenSecret) bool {
		return w.Namespace == namespace && w.Name == name
	})
	if len(status.Secrets) == 0 {
		status.Secrets = nil
	}
}

func wasSynced(status *secretsv1beta1.KeycloakClientCredentialStatus, ns string) bool {
	return slices.ContainsFunc(status.Targets, func(t secretsv1beta1.TargetStatus) bool { return t.Namespace == ns && t.Synced })
}

// othersKeys reports whether s holds data keys the operator did not write:
// then releasing it removes the operator's keys, not the Secret.
func othersKeys(s *corev1.Secret) bool {
	mine := managedKeys(s)
	for k := range s.Data {
		if !slices.Contains(mine, k) {
			return true
		}
	}
	return false
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

// releasePatch is the merge patch that removes from s the data keys the
// operator wrote and its marks (so it leaves the cache of managed Secrets),
// conditional on s being unchanged since it was read.
func releasePatch(s *corev1.Secret) []byte {
	nulls := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m[k] = nil
		}
		return m
	}
	patch := map[string]any{
		"metadata": map[string]any{
			"resourceVersion": s.ResourceVersion,
			"labels":          nulls(ManagedByLabel, OwnerNamespaceLabel, OwnerNameLabel),
			"annotations":     nulls(DataHashAnnotation, ManagedKeysAnnotation, OwnerUIDAnnotation),
		},
		"data": nulls(managedKeys(s)...),
	}
	out, err := json.Marshal(patch)
	if err != nil {
		panic(err) // maps of strings and nils always marshal
	}
	return out
}

func dataEqual(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}
