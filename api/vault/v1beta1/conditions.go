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

// Condition types of the vault.exemple.com group. Ready is always the
// summary of the others.
const (
	TypeReady        = "Ready"
	TypePolicySynced = "PolicySynced"
	TypeRoleSynced   = "RoleSynced"
	TypeConnected    = "Connected"
	// TypeAccessGranted, on a VaultApp, is True when its namespace's grant
	// covers all the spec asks; False names what it does not.
	TypeAccessGranted = "AccessGranted"
	// TypeLegacyConfiguration, on a VaultApp, is True while it is written
	// to the Vault of the operator's environment under its namespace's
	// annotations (the admin opted in): not to a VaultServer.
	TypeLegacyConfiguration = "LegacyConfiguration"
	// TypeRegistered, on a VaultServer, is True when this cluster holds
	// its name in that Vault (its registration, vko-cluster.<cluster>);
	// False when another cluster was given the same name.
	TypeRegistered = "Registered"
	// TypeIsolated, on a VaultServer, is False when another cluster
	// registered in that Vault shares what keeps tenants apart: the KV
	// paths of its namespaces, or the issuer of its tokens on the same JWT
	// mount. Not part of Ready: the admin may mean it.
	TypeIsolated = "Isolated"
)

// Reasons, on conditions and on Events. They are part of the API: alerting
// and scripts match on them, so they never change once released.
const (
	// ReasonSynced: the external state equals the spec.
	ReasonSynced = "Synced"
	// ReasonCreated: the external state was written for the first time.
	ReasonCreated = "Created"
	// ReasonUpdated: the external state was changed after a spec change (or
	// a role's token TTLs, after its name became or ceased to be asked for
	// by another cluster).
	ReasonUpdated = "Updated"
	// ReasonDriftRepaired: the external state was changed by someone else and restored.
	ReasonDriftRepaired = "DriftRepaired"
	// ReasonRefreshed: a refresh request (annotation) was honoured: Vault
	// was read and brought in step.
	ReasonRefreshed = "Refreshed"
	// ReasonGranted: the namespace's grant covers all the spec asks.
	ReasonGranted = "Granted"
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
	// ReasonHeldByAnotherCluster: another cluster's operator, sharing the
	// Vault without a name prefix of its own, holds the policy of the
	// VaultApp's name; this cluster leaves it alone and, on a VaultServer,
	// says in its registration that it asks for the name too.
	ReasonHeldByAnotherCluster = "HeldByAnotherCluster"
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
	// ReasonOperatorForbidden: Vault refused the operator's own request
	// (permission denied): the Vault admin's policy for the operator's role
	// does not allow it. The admin acts, not the app team.
	ReasonOperatorForbidden = "OperatorForbidden"
	// ReasonDefaultServerAmbiguous: more than one VaultServer is annotated
	// as the default, so a VaultApp that names none has no server; the
	// cluster admin keeps one.
	ReasonDefaultServerAmbiguous = "DefaultServerAmbiguous"
	// ReasonServerChanged: the VaultApp's policy and role were written to
	// another Vault than the one it now resolves to (its serverRef, or the
	// environment's Vault gone); a VaultApp never moves by itself.
	ReasonServerChanged = "ServerChanged"
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
	// ReasonRegistered: this cluster holds its name in the VaultServer's
	// Vault.
	ReasonRegistered = "Registered"
	// ReasonClusterNameClash: another cluster runs under this cluster's
	// name in the VaultServer's Vault (a copied spec.cluster); each leaves
	// the other's policies alone until the admin renames one.
	ReasonClusterNameClash = "ClusterNameClash"
	// ReasonIsolated: no other cluster registered in the Vault shares this
	// cluster's KV paths or, on its JWT mount, its tokens' issuer.
	ReasonIsolated = "Isolated"
	// ReasonKVShared: another cluster keeps its namespaces' secrets at
	// the same KV paths (no {cluster} in either's spec.kvPath).
	ReasonKVShared = "KVShared"
	// ReasonIssuerShared: another cluster's tokens carry the same issuer
	// on the same JWT mount: a ServiceAccount of the same namespace and
	// name there logs in at this cluster's roles.
	ReasonIssuerShared = "IssuerShared"
	// ReasonCAInvalid: a VaultServer's caSecretRef names a Secret or key
	// the operator cannot read.
	ReasonCAInvalid = "CAInvalid"
	// ReasonServerNotFound: the KeycloakServer named in the source does not exist.
	ReasonServerNotFound = "ServerNotFound"
	// ReasonLegacyConfiguration: a VaultApp uses the environment's Vault
	// and its namespace's annotations, kept while the admin opts in.
	ReasonLegacyConfiguration = "LegacyConfiguration"
)
