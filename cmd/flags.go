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

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// managerFlags is everything the manager's command line and environment
// say, read in one place.
type managerFlags struct {
	metricsAddr, probeAddr, pprofAddr string
	metricsCertPath, webhookCertPath  string
	webhookPort                       int
	webhookHost                       string
	leaderElect, secureMetrics, http2 bool

	vault             vaultclient.Config
	clusterName       string
	vaultNamePrefix   string
	operatorNamespace string
	enableWebhooks    bool

	// maxConcurrent defaults to 8: a burst of 200 repairs (edited or deleted
	// Secrets) passes a refresh wave of 1,000 objects within a second (make
	// bench, P4). Each VaultApp reconcile may send Vault two requests at once.
	maxConcurrent       int
	maxBackoff          time.Duration
	migrateOnStart      bool
	migrationPath       string
	builtinStartTimeout time.Duration
	installMonitoring   bool
	shards, shardIndex  int
	envErrs             []error

	zap zap.Options
}

// bindFlags declares the manager's flags on fs; the environment gives the
// defaults of the ones it can set.
func bindFlags(fs *flag.FlagSet) *managerFlags {
	f := &managerFlags{vault: vaultclient.ConfigFromEnv()}

	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "0", "The address Go's pprof profiles are served on (for example 127.0.0.1:6060), or 0 for none.")
	fs.BoolVar(&f.leaderElect, "leader-elect", false,
		"Enable leader election for controller manager, so that only one replica reconciles at a time.")
	fs.BoolVar(&f.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, authenticated and authorized through the API server.")
	fs.StringVar(&f.metricsCertPath, "metrics-cert-path", "", "The directory that holds the metrics server certificate.")
	fs.StringVar(&f.webhookCertPath, "webhook-cert-path", "", "The directory that holds the webhook certificate (tls.crt, tls.key).")
	fs.IntVar(&f.webhookPort, "webhook-port", webhook.DefaultPort, "The port the admission and conversion webhooks are served on (the webhook Service's targetPort).")
	fs.StringVar(&f.webhookHost, "webhook-host", "", "The address the webhooks are served on (default: every address of the pod).")
	fs.BoolVar(&f.http2, "enable-http2", false,
		"Serve the metrics and webhook servers over HTTP/2 (off: HTTP/2 Stream Cancellation and Rapid Reset CVEs).")

	fs.StringVar(&f.vault.Address, "vault-address", f.vault.Address, "Vault's address (default: VAULT_ADDR).")
	fs.StringVar(&f.vault.AuthMount, "vault-auth-mount", f.vault.AuthMount,
		"The Kubernetes auth mount the operator logs in through, with its ServiceAccount token, when VAULT_TOKEN is not set.")
	fs.StringVar(&f.vault.AuthRole, "vault-auth-role", f.vault.AuthRole, "The role the operator logs in to Vault with.")
	fs.StringVar(&f.vault.ServiceAccountTokenPath, "vault-service-account-token-path", f.vault.ServiceAccountTokenPath,
		"The ServiceAccount token the operator logs in to Vault with (a projected token with its own audience may be mounted elsewhere).")
	fs.StringVar(&f.vault.KVMount, "vault-kv-mount", f.vault.KVMount,
		"The KV version 2 mount; each namespace owns <mount>/data/<namespace>/.")
	fs.StringVar(&f.vault.KubernetesAuthMount, "vault-kubernetes-auth-mount", f.vault.KubernetesAuthMount,
		"The Kubernetes auth mount where the VaultApps' roles are written.")
	fs.StringVar(&f.clusterName, "cluster-name", os.Getenv("VKO_CLUSTER_NAME"),
		"This cluster's name in the marks the operator writes to Vault (a DNS label; default: VKO_CLUSTER_NAME, else the kube-system namespace's UID). "+
			"Set it once: a cluster sees marks of another name as another cluster's.")
	fs.StringVar(&f.vaultNamePrefix, "vault-name-prefix", os.Getenv("VKO_VAULT_NAME_PREFIX"),
		"A prefix for every Vault policy and role name, app-<prefix>.<namespace>.<name> (a DNS label of at most 20 characters; default: VKO_VAULT_NAME_PREFIX). "+
			"Give each cluster that shares a Vault its own, so that the same VaultApp in two clusters gets two policies.")
	fs.StringVar(&f.operatorNamespace, "operator-namespace", os.Getenv("OPERATOR_NAMESPACE"),
		"The namespace of the KeycloakServers' credentials Secrets (default: OPERATOR_NAMESPACE, set from the pod's namespace).")
	f.enableWebhooks = os.Getenv("ENABLE_WEBHOOKS") != "false"
	fs.IntVar(&f.maxConcurrent, "max-concurrent-reconciles", 8, "How many objects of each kind are reconciled at once.")
	fs.DurationVar(&f.maxBackoff, "max-backoff", 2*time.Minute, "The longest wait between two retries after a Vault or Keycloak failure.")
	fs.BoolVar(&f.migrateOnStart, "migrate-on-start", true,
		"Once leader, rewrite objects stored in an older version of the CRDs and trim their status.storedVersions.")
	fs.StringVar(&f.migrationPath, "storage-migration", string(migration.PathAuto), storageMigrationUsage)
	fs.DurationVar(&f.builtinStartTimeout, "builtin-migration-start-timeout", migration.DefaultBuiltinStartTimeout,
		"With --storage-migration=auto: how long a StorageVersionMigration may wait for kube-controller-manager before the operator rewrites the objects itself.")

	fs.BoolVar(&f.installMonitoring, "install-monitoring", f.envBool("VKO_INSTALL_MONITORING", true),
		"Once leader, install the operator's ServiceMonitor and PrometheusRule (config/prometheus) in its namespace, owned by its Deployment, "+
			"as soon as the cluster serves the Prometheus Operator's API (default: true unless VKO_INSTALL_MONITORING=false, which an OLM Subscription's config can set). "+
			"An object of the same name that the operator did not write is left as is. The Helm chart renders them itself and sets false.")

	fs.IntVar(&f.shards, "shards", f.envInt("VKO_SHARDS", 1),
		"Into how many shards the namespaces are split (default: VKO_SHARDS, else 1). Each shard's replicas elect their own leader, "+
			"which reconciles the VaultApps and credentials of the namespaces whose name hashes into its range (docs/design.md, Sharding).")
	fs.IntVar(&f.shardIndex, "shard-index", f.envInt("VKO_SHARD_INDEX", 0),
		"Which shard this replica serves, from 0 (default: VKO_SHARD_INDEX, else 0). Shard 0 also runs what is done once per cluster.")

	f.zap.BindFlags(fs)
	return f
}

// operatorOptions are what manager.Setup registers, from the flags.
func (f *managerFlags) operatorOptions() (manager.Options, error) {
	if err := errors.Join(f.envErrs...); err != nil {
		return manager.Options{}, err
	}
	path, err := migration.ParsePath(f.migrationPath)
	if err != nil {
		return manager.Options{}, err
	}
	s, err := shard.New(f.shardIndex, f.shards)
	if err != nil {
		return manager.Options{}, err
	}
	if s.Sharded() && os.Getenv(olmConditionEnv) != "" {
		// OLM (v0) deploys the CSV's one Deployment: the other shards would
		// never run, and their namespaces would go unreconciled unseen.
		return manager.Options{}, fmt.Errorf("--shards=%d under OLM (%s is set): OLM runs one Deployment, so shards other than %d would never run "+
			"and their namespaces would go unreconciled; the admin must remove VKO_SHARDS from the Subscription's config, or install with the Helm chart's shards value",
			f.shards, olmConditionEnv, f.shardIndex)
	}
	if s.Sharded() && f.operatorNamespace == "" {
		// The shards' Leases and the ConfigMaps of rotations live there.
		return manager.Options{}, fmt.Errorf("--shards=%d needs --operator-namespace (or OPERATOR_NAMESPACE): the shards coordinate through its Leases and ConfigMaps", f.shards)
	}
	return manager.Options{
		Vault:                   f.vault,
		ClusterName:             f.clusterName,
		VaultNamePrefix:         f.vaultNamePrefix,
		OperatorNamespace:       f.operatorNamespace,
		EnableWebhooks:          f.enableWebhooks,
		MaxConcurrentReconciles: f.maxConcurrent,
		MaxBackoff:              f.maxBackoff,
		MigrateOnStart:          f.migrateOnStart,
		MigrationPath:           path,
		BuiltinStartTimeout:     f.builtinStartTimeout,
		InstallMonitoring:       f.installMonitoring,
		Shard:                   s,
	}, nil
}

// olmConditionEnv is set by OLM (v0) on every Deployment of a CSV (its
// OperatorCondition's name): how the manager knows it is one Deployment of
// OLM's.
const olmConditionEnv = "OPERATOR_CONDITION_NAME"

// envBool is the boolean in the environment variable name (as strconv
// reads one: true, false, 1, 0…), def when it is unset; another word is
// kept for operatorOptions to refuse.
func (f *managerFlags) envBool(name string, def bool) bool {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		f.envErrs = append(f.envErrs, fmt.Errorf("%s=%q: not true or false", name, v))
		return def
	}
	return b
}

// envInt is the integer in the environment variable name, def when it is
// unset; one that is not an integer is kept for operatorOptions to refuse.
func (f *managerFlags) envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		f.envErrs = append(f.envErrs, fmt.Errorf("%s=%q: not an integer", name, v))
		return def
	}
	return n
}

const storageMigrationUsage = "Who rewrites stored objects into the storage version: builtin (a StorageVersionMigration per CRD, run by " +
	"kube-controller-manager; Kubernetes 1.37+), operator (the operator's own rewrites; any Kubernetes), or auto (builtin where " +
	"the cluster serves storagemigration.k8s.io/v1 and its controller takes the migration up in time, operator otherwise)."
