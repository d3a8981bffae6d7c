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

// Package controller holds what the controllers of both API groups share.
//
// The markers below are every permission the manager needs, in one place,
// each with the reason; controller-gen turns them into config/rbac/role.yaml
// and the bundle's clusterPermissions. No wildcards.
package controller

// The operator's own resources. Each verb is one the code uses: get, list,
// watch (the cache); patch (finalizers are set by a patch of
// metadata.finalizers alone: a VaultServer's only when its deletionPolicy
// is Delete; KeycloakServers have none); update (the
// storage-version migrator's no-op rewrites; patch, its removal of
// managedFields entries of retired versions); status update (every
// controller), and status patch (a KeycloakClientCredential's rotation is
// recorded at once); finalizers update (clusters with
// OwnerReferencesPermissionEnforcement check it when finalizers change).
// +kubebuilder:rbac:groups=vault.exemple.com,resources=vaultapps,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=vault.exemple.com,resources=vaultapps/status,verbs=update
// +kubebuilder:rbac:groups=vault.exemple.com,resources=vaultapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=vault.exemple.com,resources=vaultservers,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=vault.exemple.com,resources=vaultservers/status,verbs=update
// +kubebuilder:rbac:groups=vault.exemple.com,resources=vaultservers/finalizers,verbs=update
// +kubebuilder:rbac:groups=secrets.carbogame.com,resources=keycloakclientcredentials,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=secrets.carbogame.com,resources=keycloakclientcredentials/status,verbs=update;patch
// +kubebuilder:rbac:groups=secrets.carbogame.com,resources=keycloakclientcredentials/finalizers,verbs=update
// +kubebuilder:rbac:groups=secrets.carbogame.com,resources=keycloakservers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=secrets.carbogame.com,resources=keycloakservers/status,verbs=update

// Target Secrets in any consenting namespace (created; patched in place,
// the operator's own keys alone; deleted), and KeycloakServer credentials
// in the operator's namespace (read). The cache holds the Secrets with the
// operator's labels, as digests; other reads go to the API server directly.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete

// A VaultServer's JWT login: a token of the operator's own ServiceAccount
// for the server's audience, in its own namespace, by name; never a
// ClusterRole (a token of any ServiceAccount is that workload's identity).
// +kubebuilder:rbac:groups="",namespace=system,resources=serviceaccounts/token,verbs=create,resourceNames=vault-keycloak-operator-controller-manager

// Rotations across shards (secrets.RotationSignal): a ConfigMap per
// KeycloakServer in the operator's own namespace, written with optimistic
// locking, watched by every shard (selected by their label).
// +kubebuilder:rbac:groups="",namespace=system,resources=configmaps,verbs=get;list;watch;create;update

// The operator's own ServiceMonitor and PrometheusRule, in its namespace,
// where the cluster serves them (internal/monitoring): owned by its
// Deployment, which it reads by name for the owner reference.
// +kubebuilder:rbac:groups=apps,namespace=system,resources=deployments,verbs=get,resourceNames=vault-keycloak-operator-controller-manager
// The namespace may be shared (OLM's operators): get and patch only the
// two objects by name (create cannot be limited by name).
// +kubebuilder:rbac:groups=monitoring.coreos.com,namespace=system,resources=servicemonitors;prometheusrules,verbs=create
// +kubebuilder:rbac:groups=monitoring.coreos.com,namespace=system,resources=servicemonitors,verbs=get;patch,resourceNames=vault-keycloak-operator-controller-manager-metrics-monitor
// +kubebuilder:rbac:groups=monitoring.coreos.com,namespace=system,resources=prometheusrules,verbs=get;patch,resourceNames=vault-keycloak-operator-alerts

// A rotation's consumers (spec.rotation.consumers): the workloads of a
// target namespace that accepts the Secret, whose pods read it, are
// listed and read from the API server (not cached: no watch) and
// restarted by a patch of their pod template's annotation, as kubectl
// rollout restart does. The operator patches nothing else of them.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;patch

// Namespaces carry the cluster admin's grants: the Vault capabilities a
// namespace may use, and consent to receive Secrets from other namespaces.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Events shown by kubectl describe.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// The storage-version migrator reads the operator's own CRDs and trims their
// status.storedVersions after rewriting every object; no other CRD.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=vaultapps.vault.exemple.com;keycloakclientcredentials.secrets.carbogame.com;keycloakservers.secrets.carbogame.com,verbs=get
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,resourceNames=vaultapps.vault.exemple.com;keycloakclientcredentials.secrets.carbogame.com;keycloakservers.secrets.carbogame.com,verbs=update

// On Kubernetes 1.37+ the migration is kube-controller-manager's: the
// operator creates one StorageVersionMigration per CRD of its own (named
// vko-<crd>; get and delete only those), reads it until it succeeds or
// fails, and replaces a finished one. List tells whether the cluster
// serves the API at all; create cannot be limited by name.
// +kubebuilder:rbac:groups=storagemigration.k8s.io,resources=storageversionmigrations,verbs=list;create
// +kubebuilder:rbac:groups=storagemigration.k8s.io,resources=storageversionmigrations,resourceNames=vko-vaultapps.vault.exemple.com;vko-keycloakclientcredentials.secrets.carbogame.com;vko-keycloakservers.secrets.carbogame.com,verbs=get;delete
