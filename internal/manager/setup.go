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

// Package manager wires the controllers and webhooks of both API groups
// into a manager. cmd/main.go and the envtest suites call the same Setup, so
// the tests run the wiring that ships.
package manager

import (
	"fmt"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/internal/monitoring"
	"github.com/carbogame/vault-keycloak-operator/internal/resourcemetrics"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	secretswebhook "github.com/carbogame/vault-keycloak-operator/internal/webhook/secrets/v1beta1"
	vaultwebhook "github.com/carbogame/vault-keycloak-operator/internal/webhook/vault/v1beta1"
)

// OwnedCRDs are the CRDs of both API groups.
var OwnedCRDs = []string{
	"vaultapps.vault.exemple.com",
	"keycloakclientcredentials.secrets.carbogame.com",
	"keycloakservers.secrets.carbogame.com",
}

// NewMigrator returns a storage-version migrator that reads from the API
// server directly (not through a cache: it pages through every object).
func NewMigrator(mgr ctrl.Manager) (*migration.Migrator, error) {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	return &migration.Migrator{Client: c, Discovery: dc, Recorder: mgr.GetEventRecorder("storage-version-migrator"), Log: ctrl.Log.WithName("migration")}, nil
}

// addShardCountGuard returns the gate of the reconciles, opened by a guard
// once this replica leads and no leader of another shard count does; nil
// (open) without the operator's namespace, where the Leases are.
func addShardCountGuard(mgr ctrl.Manager, opts Options) (*shard.Gate, error) {
	if opts.OperatorNamespace == "" {
		return nil, nil
	}
	gate := &shard.Gate{}
	return gate, mgr.Add(&shardCountGuard{reader: mgr.GetAPIReader(), namespace: opts.OperatorNamespace, shard: opts.Shard,
		gate: gate, log: ctrl.Log.WithName("shards")})
}

// addMonitoringInstaller installs the operator's monitoring objects once it
// leads. Its client has no cache: a Deployment and two objects, read once.
func addMonitoringInstaller(mgr ctrl.Manager, opts Options) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	return mgr.Add(&monitoring.Installer{Client: c, Discovery: dc, Namespace: opts.OperatorNamespace,
		Interval: opts.MonitoringInterval, Log: ctrl.Log.WithName("monitoring")})
}

// Options configure what Setup registers.
type Options struct {
	// Vault is the Vault of the operator's environment (VAULT_ADDR and the
	// flags): what every VaultServer's client starts from, and, when it
	// has an address, the implicit server of releases before VaultServer
	// (granting by namespace annotations) for the VaultApps that name no
	// VaultServer and have no default one.
	Vault vaultclient.Config
	// EventPace paces the Normal Events; the zero value is the shipped
	// pace (no flag: the tests slow it to see Events wait their turn).
	EventPace EventPace
	// ClusterName names this cluster in every mark the operator writes to
	// Vault; the kube-system namespace's UID when empty.
	ClusterName string
	// VaultNamePrefix, when set, goes into the name of every policy and
	// role (app-<prefix>.<namespace>.<name>).
	VaultNamePrefix string
	// OperatorNamespace holds the KeycloakServers' credentials Secrets.
	OperatorNamespace string
	// EnableWebhooks registers the admission and conversion webhooks.
	EnableWebhooks bool
	// MaxConcurrentReconciles per controller.
	MaxConcurrentReconciles int
	// MaxBackoff caps the wait between retries after an external failure.
	MaxBackoff time.Duration
	// WebhooksOnly registers the webhooks (conversion among them) and no
	// controller: for tests of conversion and migration alone.
	WebhooksOnly bool
	// MigrateOnStart runs the storage-version migration once the manager
	// leads.
	MigrateOnStart bool
	// MigrationPath chooses who rewrites the stored objects; operator when
	// empty.
	MigrationPath migration.Path
	// BuiltinStartTimeout: see migration.Migrator.
	BuiltinStartTimeout time.Duration
	// InstallMonitoring installs the operator's ServiceMonitor and
	// PrometheusRule in OperatorNamespace once the cluster serves them.
	InstallMonitoring bool
	// MonitoringInterval is how often the installer looks again for the
	// Prometheus Operator's API; monitoring.DefaultInterval if zero.
	MonitoringInterval time.Duration
	// Shard is the part of the namespaces whose VaultApps and
	// KeycloakClientCredentials this replica reconciles (the zero value:
	// all). Only shard 0 runs what is done once per cluster: the servers'
	// controllers, the orphan sweep, the storage migration, the monitoring
	// install. A rotation reaches the readers of its client on other
	// shards through the API server (secrets.RotationSignal).
	Shard shard.Shard
	// SplitCache: the API server sends this shard its own namespaces'
	// VaultApps and credentials alone (see ShardedCacheOptions), so the
	// jobs that must see all of them read the API server.
	SplitCache bool
	// OrphanSweepInterval is how often Vault is searched for policies of
	// VaultApps that no longer exist; DefaultOrphanSweepInterval if zero.
	OrphanSweepInterval time.Duration
	// KeycloakEventsEvery is how often each realm the credentials read is
	// asked for secrets regenerated elsewhere (its admin events);
	// DefaultKeycloakEventsEvery if zero.
	KeycloakEventsEvery time.Duration
}

// DefaultKeycloakEventsEvery: a secret regenerated by another cluster
// reaches this cluster's readers within seconds, at one small request per
// realm per period.
const DefaultKeycloakEventsEvery = 5 * time.Second

// Setup registers the webhooks and controllers of both API groups. It
// returns the controllers' Event recording (nil with WebhooksOnly): Stop
// it once mgr.Start has returned, so that the Events still waiting for
// their turn are written.
func Setup(mgr ctrl.Manager, opts Options) (*EventRecording, error) {
	if err := setupWebhooks(mgr, opts); err != nil {
		return nil, err
	}
	if opts.WebhooksOnly {
		return nil, nil
	}
	recording, err := setupEventRecording(mgr, opts.EventPace)
	if err != nil {
		return nil, err
	}
	if err := setupControllers(mgr, opts, func(controller string) events.EventRecorder {
		return recording.Recorder(mgr.GetScheme(), controller)
	}); err != nil {
		recording.Stop(0)
		return nil, err
	}
	return recording, nil
}

func setupWebhooks(mgr ctrl.Manager, opts Options) error {
	if opts.EnableWebhooks {
		if err := vaultwebhook.SetupVaultAppWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("VaultApp webhooks: %w", err)
		}
		if err := vaultwebhook.SetupVaultServerWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("VaultServer webhook: %w", err)
		}
		if err := secretswebhook.SetupKeycloakClientCredentialWebhookWithManager(mgr, opts.OperatorNamespace); err != nil {
			return fmt.Errorf("KeycloakClientCredential webhooks: %w", err)
		}
		if err := secretswebhook.SetupKeycloakServerWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("KeycloakServer webhooks: %w", err)
		}
	}

	return nil
}

func setupControllers(mgr ctrl.Manager, opts Options, recorder func(controller string) events.EventRecorder) error {
	resourcemetrics.Use(mgr.GetClient(), mgr.Elected(), opts.Shard)
	gate, err := addShardCountGuard(mgr, opts)
	if err != nil {
		return err
	}
	if err := setupVaultControllers(mgr, opts, recorder, gate); err != nil {
		return err
	}
	if err := setupKeycloakControllers(mgr, opts, recorder, gate); err != nil {
		return err
	}
	if !opts.Shard.RunsClusterJobs() {
		return nil
	}
	if opts.InstallMonitoring && opts.OperatorNamespace != "" {
		if err := addMonitoringInstaller(mgr, opts); err != nil {
			return err
		}
	}
	if opts.MigrateOnStart {
		m, err := NewMigrator(mgr)
		if err != nil {
			return fmt.Errorf("storage version migrator: %w", err)
		}
		m.Path, m.BuiltinStartTimeout = opts.MigrationPath, opts.BuiltinStartTimeout
		if err := mgr.Add(&migration.OnStart{Migrator: m, CRDs: OwnedCRDs}); err != nil {
			return err
		}
	}
	return nil
}
