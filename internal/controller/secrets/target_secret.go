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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
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
	// OwnerBucketLabel is the bucket of the writer's namespace (see
	// shard.Bucket), set when the Secret is written and never changed: a
	// shard's cache of Secrets selects the buckets of its range, so that
	// it watches the Secrets its own credentials wrote, in any namespace.
	OwnerBucketLabel = "secrets.carbogame.com/owner-bucket"
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

// ManagedSecretsOf selects the Secrets written for the credentials of s's
// namespaces (and of the ones that share their buckets): every managed
// Secret for the whole. A Secret written before OwnerBucketLabel existed
// is in no shard's selection: its credential's pass finds it in the way at
// a target (and labels it) and reads it from the API server where it
// looks for the Secrets it wrote (writtenSecrets, release).
func ManagedSecretsOf(s shard.Shard) labels.Selector {
	buckets := s.Buckets()
	if buckets == nil {
		return ManagedSecrets()
	}
	in, err := labels.NewRequirement(OwnerBucketLabel, selection.In, buckets)
	if err != nil {
		panic(err) // two hex digits are always a valid label value
	}
	return ManagedSecrets().Add(*in)
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
func desiredData(kcc *secretsv1beta1.KeycloakClientCredential, cred keycloak.Credential, issuer, tokenURL string) map[string][]byte {
	keys := kcc.Spec.Target.Keys
	data := map[string][]byte{}
	previousKey := ""
	if previousValid(kcc) && cred.Previous != "" {
		previousKey = keys.PreviousClientSecret
	}
	for key, value := range map[string]string{keys.ClientID: cred.ClientID, keys.ClientSecret: cred.Secret, keys.IssuerURL: issuer, keys.TokenURL: tokenURL, previousKey: cred.Previous} {
		if key != "" {
			data[key] = []byte(value)
		}
	}
	return data
}

// released says s carries none of the operator's marks: the operator gave
// it up already (a finalize that runs again after its finalizer removal
// lost a conflict with a tenant's write), or someone took them off. Either
// way it is not the operator's to release: managedKeys would take every
// key left in it, another team's too, for the operator's.
func released(s *corev1.Secret) bool {
	for _, mark := range []string{ManagedKeysAnnotation, OwnerUIDAnnotation, DataHashAnnotation} {
		if _, ok := s.Annotations[mark]; ok {
			return false
		}
	}
	return s.Labels[ManagedByLabel] != ManagedByValue
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
