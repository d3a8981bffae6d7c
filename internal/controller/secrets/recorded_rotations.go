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
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// recordedRotations remembers the rotations this process recorded, by the
// resource's UID, until the cache shows them: a pass that reads the
// resource from a cache not yet at the rotation's status patch (the pass's
// own status update lost a conflict, and the retry came at once) must not
// find the rotation due, or its request pending, and regenerate again.
type recordedRotations struct {
	m sync.Map // types.UID → recordedRotation
}

type recordedRotation struct {
	at      metav1.Time
	request string
}

// remember records a rotation just written to the status.
func (r *recordedRotations) remember(uid types.UID, at metav1.Time, request string) {
	r.m.Store(uid, recordedRotation{at: at, request: request})
}

// overlay puts a remembered rotation the status read does not show yet
// into it (and forgets one the status shows).
func (r *recordedRotations) overlay(kcc *secretsv1beta1.KeycloakClientCredential) {
	v, ok := r.m.Load(kcc.UID)
	if !ok {
		return
	}
	rec := v.(recordedRotation)
	if last := kcc.Status.LastRotationTime; last != nil && !last.Before(&rec.at) {
		r.m.Delete(kcc.UID) // the cache caught up
		return
	}
	at := rec.at
	kcc.Status.LastRotationTime = &at
	if rec.request != "" {
		kcc.Status.LastRotationRequest = rec.request
	}
}
