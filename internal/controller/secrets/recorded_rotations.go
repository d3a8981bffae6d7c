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

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// recordedRotations remembers the rotation steps this process recorded, by
// the resource's UID, until the cache shows them: a pass that reads the
// resource from a cache not yet at the step's status patch (the pass's own
// status update lost a conflict, and the retry came at once) must not take
// the step again (regenerate twice).
type recordedRotations struct {
	m sync.Map // types.UID → recordedRotation
}

type recordedRotation struct {
	last     *metav1.Time
	request  string
	rotation *secretsv1beta1.RotationStatus
}

// remember records the rotation kcc's status holds, just written.
func (r *recordedRotations) remember(kcc *secretsv1beta1.KeycloakClientCredential) {
	st := kcc.Status.DeepCopy()
	r.m.Store(kcc.UID, recordedRotation{last: st.LastRotationTime, request: st.LastRotationRequest, rotation: st.Rotation})
}

// overlay puts a remembered rotation step the status read does not show yet
// into it (and forgets one the status shows, or has gone past).
func (r *recordedRotations) overlay(kcc *secretsv1beta1.KeycloakClientCredential) {
	v, ok := r.m.Load(kcc.UID)
	if !ok {
		return
	}
	rec := v.(recordedRotation)
	if !behind(kcc.Status.Rotation, rec.rotation) {
		r.m.Delete(kcc.UID) // the cache caught up
		return
	}
	kcc.Status.LastRotationTime = rec.last.DeepCopy()
	kcc.Status.Rotation = rec.rotation.DeepCopy()
	if rec.request != "" {
		kcc.Status.LastRotationRequest = rec.request
	}
}

// phaseOrder ranks the phases of one rotation.
var phaseOrder = map[string]int{
	secretsv1beta1.RotationRegenerating: 1,
	secretsv1beta1.RotationDistributing: 2,
	secretsv1beta1.RotationGracePeriod:  3,
	secretsv1beta1.RotationCompleted:    4,
}

// behind: seen is an earlier rotation than recorded, or an earlier phase of it.
func behind(seen, recorded *secretsv1beta1.RotationStatus) bool {
	switch {
	case recorded == nil || recorded.StartedTime == nil:
		return false
	case seen == nil || seen.StartedTime == nil || seen.StartedTime.Before(recorded.StartedTime):
		return true
	case recorded.StartedTime.Before(seen.StartedTime):
		return false
	}
	return phaseOrder[seen.Phase] < phaseOrder[recorded.Phase]
}
