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

// Package shared holds what the controllers of both API groups share: the
// condition types and reasons (used on conditions and Events), and the one
// shape of each common job — writing status when it changed, setting and
// releasing finalizers, mapping a list to reconcile requests, the backoff.
package shared

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types. Ready is always the summary of the others.
const (
	TypeReady           = "Ready"
	TypePolicySynced    = "PolicySynced"
	TypeRoleSynced      = "RoleSynced"
	TypeSourceAvailable = "SourceAvailable"
	TypeSecretsSynced   = "SecretsSynced"
	TypeConnected       = "Connected"
	// TypeLegacyGrants, on a KeycloakServer, is True while its deprecated
	// allowedNamespaces still grants read access.
	TypeLegacyGrants = "LegacyGrants"
	// TypeLegacyConfiguration, on a VaultApp, is True while it is written
	// to the Vault of the operator's environment under its namespace's
	// annotations (the admin opted in): not to a VaultServer.
	TypeLegacyConfiguration = "LegacyConfiguration"
)

// Reasons, used both on conditions and on Events. They are part of the API:
// alerting and scripts match on them, so they never change once released.
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
	// ReasonGrantNarrowed: the namespace's grant no longer covers all the
	// spec asks; Vault holds only the granted part.
	ReasonGrantNarrowed = "GrantNarrowed"
	// ReasonGrantRevoked: the namespace's grant covers nothing the spec
	// asks; the policy and role were removed from Vault.
	ReasonGrantRevoked = "GrantRevoked"
	// ReasonNotOwned: a Vault object of the VaultApp's name exists and was
	// not written by the operator for it; it is left untouched.
	ReasonNotOwned = "NotOwned"
	// ReasonRenamed: the VaultApp's policy and role moved to the name its
	// cluster's name prefix now gives; those under the former name were
	// removed (a Warning when the operator's own Vault policy does not
	// reach them, and they are left for the Vault admin).
	ReasonRenamed = "Renamed"
	// ReasonOrphanRemoved: the operator removed a policy and role it wrote
	// for a VaultApp that no longer exists.
	ReasonOrphanRemoved = "OrphanRemoved"
	// ReasonVaultError: Vault refused a request.
	ReasonVaultError = "VaultError"
	// ReasonVaultUnavailable: Vault did not answer (down, sealed, cut
	// off); the resource is reconciled again as soon as Vault answers.
	ReasonVaultUnavailable = "VaultUnavailable"
	// ReasonVaultNotConfigured: no VaultServer serves the VaultApp, and the
	// operator uses no Vault of its environment (none given, or the admin
	// has not opted in to it).
	ReasonVaultNotConfigured = "VaultNotConfigured"
	// ReasonDeleted: external state removed on deletion.
	ReasonDeleted = "Deleted"
	// ReasonRetained: external state left in place on deletion (deletionPolicy Retain).
	ReasonRetained = "Retained"
	// ReasonDeleteFailed: the external state could not be removed yet; retried.
	ReasonDeleteFailed = "DeleteFailed"

	// ReasonConnected: the operator logged in to the Keycloak or Vault server.
	ReasonConnected = "Connected"
	// ReasonCAInvalid: a VaultServer's caSecretRef names a Secret or key
	// the operator cannot read.
	ReasonCAInvalid = "CAInvalid"
	// ReasonKeycloakError: Keycloak refused a request.
	ReasonKeycloakError = "KeycloakError"
	// ReasonKeycloakUnavailable: the Keycloak server did not answer; the
	// resource is reconciled again as soon as it answers. Secrets already
	// written stay as they are.
	ReasonKeycloakUnavailable = "KeycloakUnavailable"
	// ReasonUnauthorized: Keycloak refused the operator's credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonCredentialsInvalid: the KeycloakServer's credentials Secret is missing or incomplete.
	ReasonCredentialsInvalid = "CredentialsInvalid"
	// ReasonServerNotFound: the KeycloakServer named in the source does not exist.
	ReasonServerNotFound = "ServerNotFound"
	// ReasonServerNotAllowed: the KeycloakServer grants the resource's namespace nothing.
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
	// ReasonLegacyConfiguration: a VaultApp uses the environment's Vault
	// and its namespace's annotations, kept while the admin opts in.
	ReasonLegacyConfiguration = "LegacyConfiguration"
	// ReasonRotated: the operator regenerated the client secret in Keycloak.
	ReasonRotated = "Rotated"
)

// SetCondition sets a condition for the object's current generation and
// reports whether anything changed.
func SetCondition(conditions *[]metav1.Condition, generation int64, typ string, ok bool, reason, message string) bool {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}
