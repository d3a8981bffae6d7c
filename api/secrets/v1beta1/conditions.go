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

// Condition types of the secrets.carbogame.com group. Ready is always the
// summary of the others.
const (
	TypeReady           = "Ready"
	TypeSourceAvailable = "SourceAvailable"
	TypeSecretsSynced   = "SecretsSynced"
	TypeConnected       = "Connected"
	// TypeLegacyGrants, on a KeycloakServer, is True while its deprecated
	// allowedNamespaces still grants read access.
	TypeLegacyGrants = "LegacyGrants"
	// TypeRotationReady, on a KeycloakClientCredential that rotates its
	// secret, is False when a rotation cannot go ahead as the spec asks.
	TypeRotationReady = "RotationReady"
)

// Phases of a rotation (status.rotation.phase), in their order.
const (
	// RotationRegenerating: the rotation is recorded; Keycloak is asked for
	// a new secret.
	RotationRegenerating = "Regenerating"
	// RotationDistributing: Keycloak issued the new secret; it is written to
	// every target while the previous one stays valid.
	RotationDistributing = "Distributing"
	// RotationGracePeriod: every target holds the new secret; the previous
	// one stays valid until status.rotation.graceEndsTime.
	RotationGracePeriod = "GracePeriod"
	// RotationCompleted: the previous secret was invalidated.
	RotationCompleted = "Completed"
)

// Reasons, on conditions and on Events. They are part of the API: alerting
// and scripts match on them, so they never change once released.
const (
	// ReasonSynced: the external state equals the spec.
	ReasonSynced = "Synced"
	// ReasonCreated: the external state was written for the first time.
	ReasonCreated = "Created"
	// ReasonUpdated: the external state was changed after a spec change.
	ReasonUpdated = "Updated"
	// ReasonDriftRepaired: the external state was changed by someone else and restored.
	ReasonDriftRepaired = "DriftRepaired"
	// ReasonNotAllowed: the spec asks for more than the cluster admin granted.
	ReasonNotAllowed = "NotAllowed"
	// ReasonDeleted: external state removed on deletion.
	ReasonDeleted = "Deleted"
	// ReasonRetained: external state left in place on deletion (deletionPolicy Retain).
	ReasonRetained = "Retained"
	// ReasonConnected: the operator logged in to the Keycloak or Vault server.
	ReasonConnected = "Connected"
	// ReasonKeycloakError: Keycloak refused a request.
	ReasonKeycloakError = "KeycloakError"
	// ReasonOperatorForbidden: Keycloak refused the operator's own request
	// (403): the client of the KeycloakServer's credentials lacks a
	// realm-management role in the realm. The cluster admin grants it; the
	// app team has nothing to change.
	ReasonOperatorForbidden = "OperatorForbidden"
	// ReasonKeycloakUnavailable: the Keycloak server did not answer; the
	// resource is reconciled again as soon as it answers. Secrets already
	// written stay as they are.
	ReasonKeycloakUnavailable = "KeycloakUnavailable"
	// ReasonUnauthorized: Keycloak refused the operator's credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonCredentialsInvalid: the KeycloakServer's credentials Secret is missing or incomplete.
	ReasonCredentialsInvalid = "CredentialsInvalid"
	// ReasonServerNotFound: the KeycloakServer named in the source does not
	// exist, or grants the resource's namespace nothing (one answer for
	// both: a tenant learns of no server she may not use).
	ReasonServerNotFound = "ServerNotFound"
	// ReasonServerNotAllowed is no longer set (0.2.0): a KeycloakServer that
	// grants the namespace nothing answers as ServerNotFound.
	ReasonServerNotAllowed = "ServerNotAllowed"
	// ReasonAccessNotGranted: the KeycloakServer's grants do not cover the
	// realm, the client or its rotation (or the client is protected).
	ReasonAccessNotGranted = "AccessNotGranted"
	// ReasonClientNotFound: no client, or more than one, has the clientId.
	ReasonClientNotFound = "ClientNotFound"
	// ReasonNoUsableSecret: Keycloak returned an empty or masked secret; nothing is written.
	ReasonNoUsableSecret = "NoUsableSecret"
	// ReasonSecretNotOwned: a Secret of the target name exists and is not the operator's.
	ReasonSecretNotOwned = "SecretNotOwned"
	// ReasonTargetNotAllowed: the target namespace does not consent.
	ReasonTargetNotAllowed = "TargetNotAllowed"
	// ReasonTargetFailed: writing a target Secret failed.
	ReasonTargetFailed = "TargetFailed"
	// ReasonPartiallySynced: some targets are in step, others are not.
	ReasonPartiallySynced = "PartiallySynced"
	// ReasonLegacyGrants: a KeycloakServer's deprecated allowedNamespaces
	// still grants read access (the admin opted in with an annotation).
	ReasonLegacyGrants = "LegacyGrants"
	// ReasonRotated: the operator regenerated the client secret in Keycloak.
	ReasonRotated = "Rotated"
	// ReasonRotationDistributed: every target holds the new secret; the
	// previous one stays valid for the grace period.
	ReasonRotationDistributed = "RotationDistributed"
	// ReasonPreviousSecretInvalidated: the grace period passed and the
	// previous secret was invalidated in Keycloak.
	ReasonPreviousSecretInvalidated = "PreviousSecretInvalidated"
	// ReasonGraceUnavailable: Keycloak cannot keep the previous secret valid
	// for the grace period (no client secret rotation, or too short a one),
	// and the spec does not accept downtime; nothing was regenerated.
	ReasonGraceUnavailable = "GraceUnavailable"
	// ReasonRotatedWithoutGrace: the secret was regenerated without a grace
	// period (the spec accepts downtime, or Keycloak did not keep the
	// previous secret although it said it would).
	ReasonRotatedWithoutGrace = "RotatedWithoutGrace"
	// ReasonRotationAbandoned: a rotation in progress stopped before its end:
	// the spec names another client, or the grants no longer allow rotating
	// it. Keycloak keeps the previous secret until its own expiry.
	ReasonRotationAbandoned = "RotationAbandoned"
	// ReasonRotationWaiting: a due or asked rotation waits for another
	// resource's rotation of the same client to complete, or until the
	// client may be rotated again (Keycloak's record of its secrets; the
	// message says from when).
	ReasonRotationWaiting = "Waiting"
	// ReasonRotationIdle: no rotation is in progress and none is refused.
	ReasonRotationIdle = "Idle"
	// ReasonRotationRequestRefused: a rotation request (annotation) came from
	// a namespace that may not rotate the client; nothing was regenerated.
	ReasonRotationRequestRefused = "RotationRequestRefused"
	// ReasonRefreshed: a refresh request (annotation) was honoured: the
	// client secret was read from Keycloak and written to every target
	// that accepts it (SecretsSynced says which do not).
	ReasonRefreshed = "Refreshed"
	// ReasonConsumersRestarted: every target holds the new secret, and the
	// workloads named as the rotation's consumers were restarted; the
	// previous secret stays valid until each has rolled out.
	ReasonConsumersRestarted = "ConsumersRestarted"
	// ReasonConsumerRolledOut: a consumer's rollout finished: all of its
	// pods run on the new secret.
	ReasonConsumerRolledOut = "ConsumerRolledOut"
	// ReasonConsumersTimedOut: the rollout timeout ran out before every
	// consumer rolled out; the previous secret was invalidated all the
	// same, and the consumers still on it fail to log in. The app team
	// looks at the named workloads' rollouts.
	ReasonConsumersTimedOut = "ConsumersTimedOut"
	// ReasonConsumerIgnored: a workload the spec names as a consumer was
	// not restarted: it does not exist in a target namespace that accepts
	// the Secret, or its pods do not read the Secret.
	ReasonConsumerIgnored = "ConsumerIgnored"
)
