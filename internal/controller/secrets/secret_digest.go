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
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The manager's cache of Secrets holds digests, never values. Anyone who
// may create a Secret can put the operator's labels on it, so the cache
// can hold Secrets the operator never wrote (up to 1 MiB of data each); as
// digests they cost a few bytes per key, and no tenant's value ever sits
// in the manager's memory. Everything the controller decides about a
// target Secret (whose keys, edited or not, in step or not) needs only
// the digests; what it writes goes as an apply of its own keys
// (target_secret_write.go), never as the cached object.
//
// The informer may hand one object to the transform twice (the initial
// list), so digest marks what it digested, where no Secret read from the
// API server can carry a mark: stringData, which is write-only (the API
// server folds it into data and never returns it). A mark in an annotation
// would be anyone's to forge.
const (
	// digestedMark is the key of that mark in stringData.
	digestedMark = "secrets.carbogame.com/digested"
	// observedHashAnnotation is dataHash of the values of the operator's
	// keys, as the Secret held them. It exists only in memory (digested
	// Secrets are never written back); a value the Secret itself carries
	// under this key is overwritten.
	observedHashAnnotation = "secrets.carbogame.com/observed-data-hash"
	// longAnnotation: an annotation value longer than this (others' or the
	// spec's, never the operator's marks) is kept as its digest.
	longAnnotation = 128
	// digestPrefix starts an annotation value kept as its digest.
	digestPrefix = "sha256:"
)

// DigestSecret is the cache's transform for Secrets: managedFields but the
// operator's entries dropped, values and long annotation values replaced by
// their digests.
func DigestSecret(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		s.ManagedFields = operatorEntries(s)
		digest(s)
	}
	return obj, nil
}

// digest turns s, as read from the API server, into its digested form,
// once.
func digest(s *corev1.Secret) {
	if s.StringData[digestedMark] == "true" {
		return
	}
	observed := dataHash(managedData(s))
	for k, v := range s.Data {
		s.Data[k] = valueDigest(v)
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	for k, v := range s.Annotations {
		if len(v) > longAnnotation && !operatorMark(k) {
			s.Annotations[k] = annotationDigest(v)
		}
	}
	s.Annotations[observedHashAnnotation] = observed
	s.StringData = map[string]string{digestedMark: "true"}
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
// it last wrote them (s digested).
func edited(s *corev1.Secret) bool {
	return s.Annotations[DataHashAnnotation] != s.Annotations[observedHashAnnotation]
}

func valueDigest(v []byte) []byte {
	sum := sha256.Sum256(v)
	return sum[:]
}

func annotationDigest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return digestPrefix + hex.EncodeToString(sum[:])
}

// sameAnnotation reports whether a digested Secret's annotation value is
// want (itself, or its digest).
func sameAnnotation(have, want string) bool {
	return have == want || (len(want) > longAnnotation && have == annotationDigest(want))
}

func operatorMark(key string) bool {
	return strings.HasPrefix(key, "secrets.carbogame.com/")
}
