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
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// What the operator writes to a target Secret: the whole Secret when it
// creates one, afterwards a server-side apply of its own keys, labels and
// annotations alone (field_ownership.go), and a merge patch that removes
// them when it lets the Secret go. Keys, labels and annotations others
// added are never in a write, so they stay.

// Placeholders of TargetShapes: what a value will be, never a value.
const (
	ShapeSecret         = "<the client's secret, read from Keycloak>"
	ShapePreviousSecret = "<the previous secret, during a rotation's grace period>"
)

// TargetShapes are the Secrets a credential writes, one per target
// namespace, with what each key will hold in place of the values (kubectl
// vko render). keycloakURL is its KeycloakServer's spec.url.
func TargetShapes(kcc *secretsv1beta1.KeycloakClientCredential, keycloakURL string) []*corev1.Secret {
	realm := kcc.Spec.Source.Realm
	shape := keycloak.Credential{ClientID: kcc.Spec.Source.ClientID, Secret: ShapeSecret}
	data := desiredData(kcc, shape, keycloak.IssuerURLAt(keycloakURL, realm), keycloak.TokenURLAt(keycloakURL, realm))
	if key := kcc.Spec.Target.Keys.PreviousClientSecret; key != "" {
		data[key] = []byte(ShapePreviousSecret)
	}
	namespaces := tenancy.TargetNamespaces(kcc)
	out := make([]*corev1.Secret, 0, len(namespaces))
	for _, ns := range namespaces {
		out = append(out, newTargetSecret(kcc, ns, data))
	}
	return out
}

// newTargetSecret is the Secret to create in namespace.
func newTargetSecret(kcc *secretsv1beta1.KeycloakClientCredential, namespace string, data map[string][]byte) *corev1.Secret {
	labels, annotations := desiredMeta(kcc, data)
	t := kcc.Spec.Target.Type
	if t == "" {
		t = corev1.SecretTypeOpaque
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kcc.Spec.Target.SecretName, Namespace: namespace, Labels: labels, Annotations: annotations},
		Type:       t,
		Data:       maps.Clone(data),
	}
}

// desiredMeta are the labels and annotations the operator sets: the spec's,
// and its marks.
func desiredMeta(kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) (labels, annotations map[string]string) {
	labels = maps.Clone(kcc.Spec.Target.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, ownedBy(kcc))
	labels[OwnerBucketLabel] = shard.Bucket(kcc.Namespace)
	annotations = maps.Clone(kcc.Spec.Target.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ManagedKeysAnnotation] = strings.Join(slices.Sorted(maps.Keys(data)), ",")
	annotations[DataHashAnnotation] = dataHash(data)
	if kcc.UID != "" {
		annotations[OwnerUIDAnnotation] = string(kcc.UID)
	}
	return labels, annotations
}

// needsApply reports whether applying the operator's fields would change
// the digested Secret s: a key, label or annotation to set, or one it
// owns and no longer sets.
func needsApply(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) bool {
	labels, annotations := desiredMeta(kcc, data)
	for k, v := range labels {
		if have, ok := s.Labels[k]; !ok || have != v {
			return true
		}
	}
	for k, v := range annotations {
		if have, ok := s.Annotations[k]; !ok || !sameAnnotation(have, v) {
			return true
		}
	}
	for k, v := range data {
		if have, ok := s.Data[k]; !ok || !bytes.Equal(have, valueDigest(v)) {
			return true
		}
	}
	return len(dropped(s, labels, annotations, data)) > 0
}

// lacksBucketAlone says whether s differs from what the operator writes
// by OwnerBucketLabel alone: a Secret written before the label existed.
func lacksBucketAlone(s *corev1.Secret, kcc *secretsv1beta1.KeycloakClientCredential, data map[string][]byte) bool {
	if _, ok := s.Labels[OwnerBucketLabel]; ok {
		return false
	}
	labelled := s.DeepCopy()
	if labelled.Labels == nil {
		labelled.Labels = map[string]string{}
	}
	labelled.Labels[OwnerBucketLabel] = shard.Bucket(kcc.Namespace)
	return !needsApply(labelled, kcc, data)
}

// appliedSecret is what the operator applies to its Secret s: its keys,
// labels and annotations (desiredMeta; not the type, set at creation and
// immutable), conditional on the resourceVersion it decided on, so a key
// someone adds meanwhile is never taken.
func appliedSecret(s *corev1.Secret, labels, annotations map[string]string, data map[string][]byte) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(s.Name, s.Namespace).WithResourceVersion(s.ResourceVersion).
		WithLabels(labels).WithAnnotations(annotations).WithData(data)
}

// releasePatch is the patch that removes from s the data keys the operator
// wrote and its marks (so it leaves the cache of managed Secrets).
func releasePatch(s *corev1.Secret) []byte {
	nulls := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m[k] = nil
		}
		return m
	}
	return marshal(map[string]any{
		fieldMetadata: map[string]any{
			"resourceVersion": s.ResourceVersion,
			fieldLabels:       nulls(ManagedByLabel, OwnerNamespaceLabel, OwnerNameLabel, OwnerBucketLabel),
			fieldAnnotations:  nulls(DataHashAnnotation, ManagedKeysAnnotation, OwnerUIDAnnotation),
		},
		fieldData: nulls(managedKeys(s)...),
	})
}

// The parts of a Secret the operator writes, as named in a patch and in
// the names of the fields it removes ("labels/team").
const (
	fieldData        = "data"
	fieldMetadata    = "metadata"
	fieldLabels      = "labels"
	fieldAnnotations = "annotations"
)

func marshal(patch map[string]any) []byte {
	out, err := json.Marshal(patch)
	if err != nil {
		panic(err) // maps of strings, bytes and nils always marshal
	}
	return out
}
