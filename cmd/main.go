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

// Command manager runs the vault-keycloak-operator: the controllers and
// webhooks of the vault.exemple.com and secrets.carbogame.com groups, in one
// manager with leader election, health probes and secure metrics.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"

	"time"

	"k8s.io/client-go/discovery"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/internal/operator"
	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
)

var setupLog = ctrl.Log.WithName("setup")

// Leader election timing; see ctrl.Options below.
var (
	leaseDuration = 12 * time.Second
	renewDeadline = 8 * time.Second
	retryPeriod   = 2 * time.Second
)

func main() {
	// "manager migrate" migrates the stored objects of the operator's CRDs
	// to the storage version once, and exits: the on-demand form of what the
	// manager does on start.
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		os.Exit(migrate(os.Args[2:]))
	}
	var (
		metricsAddr, probeAddr, webhookCertPath, metricsCertPath string
		enableLeaderElection, secureMetrics, enableHTTP2         bool
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election for controller manager, so that only one replica reconciles at a time.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, authenticated and authorized through the API server.")
	flag.StringVar(&webhookCertPath, "webhook-cert-path", "", "The directory that holds the webhook certificate (tls.crt, tls.key).")
	var pprofAddr string
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0", "The address Go's pprof profiles are served on (for example 127.0.0.1:6060), or 0 for none.")
	var webhookPort int
	flag.IntVar(&webhookPort, "webhook-port", webhook.DefaultPort, "The port the admission and conversion webhooks are served on (the webhook Service's targetPort).")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "", "The directory that holds the metrics server certificate.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"Serve the metrics and webhook servers over HTTP/2 (off: HTTP/2 Stream Cancellation and Rapid Reset CVEs).")
	vaultCfg := vaultclient.ConfigFromEnv()
	flag.StringVar(&vaultCfg.Address, "vault-address", vaultCfg.Address, "Vault's address (default: VAULT_ADDR).")
	flag.StringVar(&vaultCfg.AuthMount, "vault-auth-mount", vaultCfg.AuthMount,
		"The Kubernetes auth mount the operator logs in through, with its ServiceAccount token, when VAULT_TOKEN is not set.")
	flag.StringVar(&vaultCfg.AuthRole, "vault-auth-role", vaultCfg.AuthRole, "The role the operator logs in to Vault with.")
	flag.StringVar(&vaultCfg.ServiceAccountTokenPath, "vault-service-account-token-path", vaultCfg.ServiceAccountTokenPath,
		"The ServiceAccount token the operator logs in to Vault with (a projected token with its own audience may be mounted elsewhere).")
	flag.StringVar(&vaultCfg.KVMount, "vault-kv-mount", vaultCfg.KVMount,
		"The KV version 2 mount; each namespace owns <mount>/data/<namespace>/.")
	flag.StringVar(&vaultCfg.KubernetesAuthMount, "vault-kubernetes-auth-mount", vaultCfg.KubernetesAuthMount,
		"The Kubernetes auth mount where the VaultApps' roles are written.")
	legacyVaultEnvironment := os.Getenv(operator.EnvLegacyVaultEnvironment) == "true"
	flag.BoolVar(&legacyVaultEnvironment, "legacy-vault-environment", legacyVaultEnvironment,
		"Use the Vault of the environment (VAULT_ADDR and the --vault-* flags) for VaultApps that name no VaultServer, granted by namespace annotations, "+
			"as releases before VaultServer did (default: "+operator.EnvLegacyVaultEnvironment+"=true). Each such VaultApp says LegacyConfiguration.")
	clusterName := os.Getenv("VKO_CLUSTER_NAME")
	flag.StringVar(&clusterName, "cluster-name", clusterName,
		"This cluster's name in the marks the operator writes to Vault (a DNS label; default: VKO_CLUSTER_NAME, else the kube-system namespace's UID). "+
			"Set it once: a cluster sees marks of another name as another cluster's.")
	vaultNamePrefix := os.Getenv("VKO_VAULT_NAME_PREFIX")
	flag.StringVar(&vaultNamePrefix, "vault-name-prefix", vaultNamePrefix,
		"A prefix for every Vault policy and role name, app-<prefix>.<namespace>.<name> (a DNS label of at most 20 characters; default: VKO_VAULT_NAME_PREFIX). "+
			"Give each cluster that shares a Vault its own, so that the same VaultApp in two clusters gets two policies.")
	operatorNamespace := os.Getenv("OPERATOR_NAMESPACE")
	flag.StringVar(&operatorNamespace, "operator-namespace", operatorNamespace,
		"The namespace of the KeycloakServers' credentials Secrets (default: OPERATOR_NAMESPACE, set from the pod's namespace).")
	var maxConcurrent int
	var maxBackoff time.Duration
	// 8: a burst of 200 repairs (edited or deleted Secrets) passes a
	// refresh wave of 1,000 objects within a second (make bench, P4). Each
	// VaultApp reconcile may send Vault two requests at once.
	flag.IntVar(&maxConcurrent, "max-concurrent-reconciles", 8, "How many objects of each kind are reconciled at once.")
	flag.DurationVar(&maxBackoff, "max-backoff", 2*time.Minute, "The longest wait between two retries after a Vault or Keycloak failure.")
	var migrateOnStart bool
	flag.BoolVar(&migrateOnStart, "migrate-on-start", true,
		"Once leader, rewrite objects stored in an older version of the CRDs and trim their status.storedVersions.")
	var migrationPath string
	flag.StringVar(&migrationPath, "storage-migration", string(migration.PathAuto), storageMigrationUsage)
	var builtinStartTimeout time.Duration
	flag.DurationVar(&builtinStartTimeout, "builtin-migration-start-timeout", migration.DefaultBuiltinStartTimeout,
		"With --storage-migration=auto: how long a StorageVersionMigration may wait for kube-controller-manager before the operator rewrites the objects itself.")
	enableWebhooks := os.Getenv("ENABLE_WEBHOOKS") != "false"
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	path, err := migration.ParsePath(migrationPath)
	if err != nil {
		setupLog.Error(err, "invalid --storage-migration")
		os.Exit(2)
	}

	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	metricsOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       tlsOpts,
		CertDir:       metricsCertPath,
	}
	if secureMetrics {
		metricsOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 operator.NewScheme(),
		Cache:                  operator.CacheOptions(),
		Metrics:                metricsOptions,
		WebhookServer:          webhook.NewServer(webhook.Options{TLSOpts: tlsOpts, CertDir: webhookCertPath, Port: webhookPort}),
		HealthProbeBindAddress: probeAddr,
		PprofBindAddress:       pprofAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "vault-keycloak-operator.carbogame.com",
		// The pod's namespace. Empty, controller-runtime reads it from the
		// mounted ServiceAccount, which a manager run outside a pod lacks.
		LeaderElectionNamespace: operatorNamespace,
		// The process exits as soon as the manager stops, so handing the
		// lease back at once is safe, and an upgraded pod takes over without
		// waiting for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		// A leader that dies without handing the lease back (node lost, OOM
		// kill) is replaced once the lease expires: 12 s, renewed every 2 s,
		// so a standby takes over within about 15 s (test/faults: R4, within
		// 20 s). The defaults (15 s) came too close to that bound.
		LeaseDuration: &leaseDuration,
		RenewDeadline: &renewDeadline,
		RetryPeriod:   &retryPeriod,
	})
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}

	events, err := operator.Setup(mgr, operator.Options{
		Vault:                   vaultCfg,
		LegacyVaultEnvironment:  legacyVaultEnvironment,
		ClusterName:             clusterName,
		VaultNamePrefix:         vaultNamePrefix,
		OperatorNamespace:       operatorNamespace,
		EnableWebhooks:          enableWebhooks,
		MaxConcurrentReconciles: maxConcurrent,
		MaxBackoff:              maxBackoff,
		MigrateOnStart:          migrateOnStart,
		MigrationPath:           path,
		BuiltinStartTimeout:     builtinStartTimeout,
	})
	if err != nil {
		setupLog.Error(err, "unable to set up the controllers and webhooks")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	err = mgr.Start(ctrl.SetupSignalHandler())
	// The controllers have stopped: write the Events still waiting.
	events.Stop(operator.EventsFlushTimeout)
	if err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}

const storageMigrationUsage = "Who rewrites stored objects into the storage version: builtin (a StorageVersionMigration per CRD, run by " +
	"kube-controller-manager; Kubernetes 1.37+), operator (the operator's own rewrites; any Kubernetes), or auto (builtin where " +
	"the cluster serves storagemigration.k8s.io/v1 and its controller takes the migration up in time, operator otherwise)."

func migrate(args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ExitOnError)
	pathFlag := fs.String("storage-migration", string(migration.PathAuto), storageMigrationUsage)
	opts := zap.Options{}
	opts.BindFlags(fs)
	_ = fs.Parse(args)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("migration")

	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		log.Error(err, "unable to create a client")
		return 1
	}
	path, err := migration.ParsePath(*pathFlag)
	if err != nil {
		log.Error(err, "invalid --storage-migration")
		return 2
	}
	dc, err := discovery.NewDiscoveryClientForConfig(ctrl.GetConfigOrDie())
	if err != nil {
		log.Error(err, "unable to create a discovery client")
		return 1
	}
	m := &migration.Migrator{Client: c, Discovery: dc, Log: log, Path: path}
	results, err := m.Migrate(ctrl.SetupSignalHandler(), operator.OwnedCRDs...)
	for _, r := range results {
		fmt.Printf("%s: storage version %s, up to date before: %v, rewritten by: %s, %d object(s) rewritten by the operator\n",
			r.CRD, r.Storage, r.UpToDate, r.Path, r.Migrated)
	}
	if err != nil {
		log.Error(err, "migration failed")
		return 1
	}
	return 0
}
