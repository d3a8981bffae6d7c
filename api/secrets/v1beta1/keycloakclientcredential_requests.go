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

package v1beta1

import (
	"time"

	"github.com/carbogame/vault-keycloak-operator/api/ondemand"
)

// RotationRequestGap is the least time between a rotation and one asked by
// annotation: a request inside it waits until the gap has passed (the
// webhook refuses it, saying when). Every other reader of the client, in
// any namespace, needs its refresh to catch up with a rotation; rotations
// asked in a loop would keep them failing.
const RotationRequestGap = 5 * time.Minute

// Requests made by annotation: the value is a request id (a timestamp, a
// change number), honoured once and echoed in the status; writing a new id
// asks again.
const (
	// RefreshRequestAnnotation asks for the client secret to be read from
	// Keycloak now and every target brought in step (anyone who may edit
	// the resource may ask). Echoed in status.lastRefreshRequest.
	RefreshRequestAnnotation = "secrets.carbogame.com/refresh-request"
	// RotationRequestAnnotation asks for the client secret to be
	// regenerated in Keycloak now. Only a namespace whose KeycloakServer
	// grant allows rotating the client may ask: the webhook refuses the
	// others, and the operator does not act on them (Warning Event
	// RotationRequestRefused). Echoed in status.lastRotationRequest.
	RotationRequestAnnotation = "secrets.carbogame.com/rotation-request"
)

// PendingRefresh is the refresh request not honoured yet, "" when none.
func (k *KeycloakClientCredential) PendingRefresh() string {
	return ondemand.Pending(k.Annotations, RefreshRequestAnnotation, k.Status.LastRefreshRequest)
}

// PendingRotation is the rotation request not handled yet, "" when none.
func (k *KeycloakClientCredential) PendingRotation() string {
	return ondemand.Pending(k.Annotations, RotationRequestAnnotation, k.Status.LastRotationRequest)
}

// RotationRequestAllowedAt is the earliest time a rotation request is acted
// on: RotationRequestGap after the last rotation.
func (k *KeycloakClientCredential) RotationRequestAllowedAt() time.Time {
	if k.Status.LastRotationTime == nil {
		return time.Time{}
	}
	return k.Status.LastRotationTime.Add(RotationRequestGap)
}

// RotationDueAt is when the next scheduled rotation is due: the interval
// after the last rotation began (or after creation); false when the spec
// schedules none.
func (k *KeycloakClientCredential) RotationDueAt() (time.Time, bool) {
	if k.Spec.Rotation == nil || k.Spec.Rotation.Interval.Duration <= 0 {
		return time.Time{}, false
	}
	last := k.CreationTimestamp.Time
	if k.Status.LastRotationTime != nil {
		last = k.Status.LastRotationTime.Time
	}
	return last.Add(k.Spec.Rotation.Interval.Duration), true
}
