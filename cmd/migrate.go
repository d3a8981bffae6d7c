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
	"flag"
	"fmt"

	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
)

// migrate is "manager migrate": the stored objects of the operator's CRDs
// migrated to the storage version once, the on-demand form of what the
// manager does on start. It returns the exit code.
func migrate(args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ExitOnError)
	pathFlag := fs.String("storage-migration", string(migration.PathAuto), storageMigrationUsage)
	opts := zap.Options{}
	opts.BindFlags(fs)
	_ = fs.Parse(args)
	ctrl.SetLogger(newLogger(&opts))
	log := ctrl.Log.WithName("migration")

	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: manager.NewScheme()})
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
	results, err := m.Migrate(ctrl.SetupSignalHandler(), manager.OwnedCRDs...)
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
