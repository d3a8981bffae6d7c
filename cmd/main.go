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
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"time"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

var setupLog = ctrl.Log.WithName("setup")

// Leader election timing. A leader that dies without handing the lease
// back (node lost, OOM kill) is replaced once the lease expires: 12 s,
// renewed every 2 s, so a standby takes over within about 15 s
// (test/faults: R4, within 20 s). The defaults (15 s) came too close.
var (
	leaseDuration = 12 * time.Second
	renewDeadline = 8 * time.Second
	retryPeriod   = 2 * time.Second
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "migrate" {
		os.Exit(migrate(os.Args[2:]))
	}
	flags := bindFlags(flag.CommandLine)
	flag.Parse()
	cfg := ctrl.GetConfigOrDie()
	// The ConfigMap's settings go in before anything reads the flags (the
	// log level included), so the logger comes after.
	settings, settingsErr := readSettings(cfg, flags.operatorNamespace)
	ctrl.SetLogger(newLogger(&flags.zap))
	if settingsErr != nil {
		setupLog.Error(settingsErr, "invalid configuration")
		os.Exit(2)
	}
	if len(settings) > 0 {
		setupLog.Info("settings from the ConfigMap", "configMap", flags.operatorNamespace+"/"+settingsConfigMap, "flags", settings)
	}
	opts, err := flags.operatorOptions()
	if err != nil {
		setupLog.Error(err, "invalid configuration")
		os.Exit(2)
	}

	// Who wrote what, in the API server's audit log: each shard says which.
	cfg.UserAgent = "vault-keycloak-operator (shard " + opts.Shard.String() + ")"
	serverSide := servesShardedLists(cfg, opts.Shard)
	opts.SplitCache = manager.SplitsCache(opts.Shard, serverSide)
	mgr, err := ctrl.NewManager(cfg, flags.managerOptions(opts.Shard, serverSide))
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}
	events, err := manager.Setup(mgr, opts)
	if err != nil {
		setupLog.Error(err, "unable to set up the controllers and webhooks")
		os.Exit(1)
	}
	if err := addProbes(mgr, opts.EnableWebhooks); err != nil {
		setupLog.Error(err, "unable to set up the health and ready checks")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	err = mgr.Start(ctrl.SetupSignalHandler())
	// The controllers have stopped: write the Events still waiting.
	events.Stop(manager.EventsFlushTimeout)
	if err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}

// addProbes adds the liveness check, and a readiness that waits for the
// webhook server: the API server calls it for every conversion, so a
// replica must not take traffic before it serves.
func addProbes(mgr ctrl.Manager, webhooks bool) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	ready := healthz.Ping
	if webhooks {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		return fmt.Errorf("ready check: %w", err)
	}
	return nil
}

// servesShardedLists says whether the API server sends a sharded replica
// its namespaces alone, and logs what the replica caches; false for one
// replica, or when the API server cannot tell.
func servesShardedLists(cfg *rest.Config, s shard.Shard) bool {
	if !s.Sharded() {
		return false
	}
	serverSide, err := manager.ServesShardedLists(context.Background(), cfg, s)
	switch {
	case err != nil:
		setupLog.Error(err, "cannot tell whether the API server serves sharded lists: this replica caches every namespace and reconciles its own", "shard", s.String())
	case serverSide:
		setupLog.Info("sharded: the API server sends this replica its namespaces alone", "shard", s.String(), "selector", s.Selector())
	default:
		setupLog.Info("sharded on this side: the API server does not serve sharded list and watch (feature gate ShardedListAndWatch), "+
			"so this replica caches every namespace's objects and reconciles its own", "shard", s.String())
	}
	return serverSide
}

// managerOptions are the controller-runtime manager's options, from the
// flags, for shard s (serverSide: the API server filters its lists).
func (f *managerFlags) managerOptions(s shard.Shard, serverSide bool) ctrl.Options {
	var tlsOpts []func(*tls.Config)
	if !f.http2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metrics := metricsserver.Options{BindAddress: f.metricsAddr, SecureServing: f.secureMetrics, TLSOpts: tlsOpts, CertDir: f.metricsCertPath}
	if f.secureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return ctrl.Options{
		Scheme:                 manager.NewScheme(),
		Cache:                  manager.ShardedCacheOptions(s, serverSide),
		Client:                 manager.ClientOptions(),
		Controller:             ctrlconfig.Controller{ReconciliationTimeout: manager.ReconciliationTimeout},
		Metrics:                metrics,
		WebhookServer:          webhook.NewServer(webhook.Options{TLSOpts: tlsOpts, CertDir: f.webhookCertPath, Host: f.webhookHost, Port: f.webhookPort}),
		HealthProbeBindAddress: f.probeAddr,
		PprofBindAddress:       f.pprofAddr,
		LeaderElection:         f.leaderElect,
		// Each shard elects its own leader; shard 0 of 1 keeps the Lease
		// of releases before sharding.
		LeaderElectionID: s.LeaseName(manager.LeaderElectionBase),
		// The pod's namespace. Empty, controller-runtime reads it from the
		// mounted ServiceAccount, which a manager run outside a pod lacks.
		LeaderElectionNamespace: f.operatorNamespace,
		// The process exits as soon as the manager stops, so handing the
		// lease back at once is safe, and an upgraded pod takes over without
		// waiting for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &leaseDuration,
		RenewDeadline:                 &renewDeadline,
		RetryPeriod:                   &retryPeriod,
	}
}
