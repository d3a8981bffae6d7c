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
	"cmp"
	"fmt"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// setupKeycloakControllers adds the KeycloakClientCredential controller,
// and in the replica that runs the cluster's jobs the KeycloakServer
// controller, over one pool of Keycloak clients.
func setupKeycloakControllers(mgr ctrl.Manager, opts Options, recorder func(controller string) events.EventRecorder, gate *shard.Gate) error {
	credentials, err := credentialsCache(mgr, opts.OperatorNamespace)
	if err != nil {
		return err
	}
	keycloaks := &secretscontroller.ClientSource{Reader: mgr.GetAPIReader(), Namespace: opts.OperatorNamespace, Pool: keycloak.NewPool()}
	var rotations *secretscontroller.RotationSignal
	if credentials != nil {
		keycloaks.Metadata = credentials
	}
	if credentials != nil && opts.Shard.Sharded() {
		// A client's readers and rotations may sit in other shards' ranges.
		// One replica coordinates its rotations in memory, as before.
		rotations = &secretscontroller.RotationSignal{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: credentials, Namespace: opts.OperatorNamespace}
	}
	if opts.Shard.RunsClusterJobs() {
		if err := (&secretscontroller.KeycloakServerReconciler{
			Client:      mgr.GetClient(),
			Clients:     keycloaks,
			Recorder:    recorder("keycloakserver-controller"),
			MaxBackoff:  opts.MaxBackoff,
			Credentials: credentials,
		}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("KeycloakServer controller: %w", err)
		}
	}
	if err := (&secretscontroller.KeycloakClientCredentialReconciler{
		Client:                  mgr.GetClient(),
		Reader:                  mgr.GetAPIReader(),
		Clients:                 keycloaks,
		Recorder:                recorder("keycloakclientcredential-controller"),
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		MaxBackoff:              opts.MaxBackoff,
		Shard:                   opts.Shard,
		Rotations:               rotations,
		Gate:                    gate,
		RegenerationsEvery:      cmp.Or(opts.KeycloakEventsEvery, DefaultKeycloakEventsEvery),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("KeycloakClientCredential controller: %w", err)
	}
	return nil
}
