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

package manager

import (
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	vaultcontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// setupVaultControllers adds the VaultApp controller, and in the replica
// that runs the cluster's jobs the VaultServer controller and the orphan
// sweep, all over the same servers (VaultServers and the environment's
// Vault).
func setupVaultControllers(mgr ctrl.Manager, opts Options, recorder func(controller string) events.EventRecorder, gate *shard.Gate) error {
	clusterJobs := opts.Shard.RunsClusterJobs()
	clusterUID, err := kubeSystemUID(mgr.GetAPIReader())
	if err != nil {
		return err
	}
	vaults, err := vaultDestinations(mgr, opts, clusterUID)
	if err != nil {
		return err
	}
	everyVaultApp, countInterval := vaultAppCounting(mgr, opts)
	if clusterJobs {
		if err := (&vaultcontroller.VaultServerReconciler{
			Client:        mgr.GetClient(),
			Clients:       vaults.Clients,
			Recorder:      recorder("vaultserver-controller"),
			ClusterUID:    clusterUID,
			MaxBackoff:    opts.MaxBackoff,
			Apps:          everyVaultApp,
			CountInterval: countInterval,
		}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("VaultServer controller: %w", err)
		}
	}
	// The environment's Vault, if any, is one server among the others.
	var vault vaultcontroller.VaultAPI
	var identity vaultcontroller.Identity
	if vaults.Env != nil {
		vault, identity = vaults.Env.Vault, vaults.Env.Identity
	}
	if err := (&vaultcontroller.VaultAppReconciler{
		Client:                  mgr.GetClient(),
		Destinations:            vaults,
		Vault:                   vault,
		Identity:                identity,
		Recorder:                recorder("vaultapp-controller"),
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		MaxBackoff:              opts.MaxBackoff,
		Shard:                   opts.Shard,
		Gate:                    gate,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("VaultApp controller: %w", err)
	}
	if !clusterJobs {
		return nil
	}
	if err := mgr.Add(&vaultcontroller.OrphanSweeper{
		Reader:       mgr.GetAPIReader(),
		Apps:         everyVaultApp,
		Destinations: vaults,
		Recorder:     recorder("vaultapp-controller"),
		Interval:     opts.OrphanSweepInterval,
	}); err != nil {
		return fmt.Errorf("vault orphan sweep: %w", err)
	}
	return nil
}

// vaultAppCounting is where the VaultServers' counts and the orphan sweep
// read every VaultApp, and how often a server's count is taken again.
func vaultAppCounting(mgr ctrl.Manager, opts Options) (vaultcontroller.EveryVaultApp, time.Duration) {
	if opts.SplitCache {
		// A server's count reads every VaultApp from the API server: once
		// per check, not after each burst of its own shard's VaultApps.
		return vaultcontroller.EveryVaultApp{Reader: mgr.GetAPIReader(), Paged: true}, vaultcontroller.ServerCheckInterval
	}
	return vaultcontroller.EveryVaultApp{Reader: mgr.GetClient()}, 0
}
