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

// Package migration moves stored objects of the operator's CRDs to the
// current storage version, in the operator itself (OLM has no hook to run a
// CLI), as cluster-api's crdmigrator does: rewrite every object with a no-op
// update, which the API server stores in the storage version, then trim the
// CRD's status.storedVersions to that version alone. Until storedVersions
// is trimmed, a later release cannot stop serving v1alpha1: the API server
// refuses to remove a version that is still listed there, and OLM refuses
// the upgrade.
package migration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/carbogame/vault-keycloak-operator/internal/counter"
)

// ReasonMigrated and ReasonMigrationFailed are the reasons of the Events
// recorded on a CRD.
const (
	ReasonMigrated        = "StorageVersionMigrated"
	ReasonMigrationFailed = "StorageVersionMigrationFailed"
	// ReasonManagedFieldsCleaned: managedFields entries of a version no
	// longer served were removed.
	ReasonManagedFieldsCleaned = "ManagedFieldsCleaned"
)

// ErrStorageVersionChanged stops a run whose CRD got a new storage version
// meanwhile (an upgrade in progress); the next run starts over.
var ErrStorageVersionChanged = errors.New("the CRD's storage version changed during the migration")

// crdLabel names the CRD in every migration metric.
const crdLabel = "crd"

var (
	objectsMigrated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vko_storage_migration_objects_total",
		Help: "Objects rewritten in the storage version, by CRD.",
	}, []string{crdLabel})
	runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vko_storage_migration_runs_total",
		Help: "Storage-version migrations, by CRD, outcome (migrated, up_to_date, failed) and path (builtin: a StorageVersionMigration; operator: the operator's rewrites; none: nothing was rewritten).",
	}, []string{crdLabel, "outcome", "path"})
	// pending is what an alert reads: a counter of failures says nothing
	// once retries stop, and a first failure has no earlier sample.
	pending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vko_storage_migration_pending",
		Help: "1 while the last storage-version migration of a CRD failed (it is retried), 0 once its objects are all in the storage version.",
	}, []string{crdLabel})
)

func init() {
	metrics.Registry.MustRegister(objectsMigrated, runs, pending)
}

// Migrator migrates the stored objects of CRDs.
type Migrator struct {
	// Client reads and updates CRDs (and their status) and the objects.
	// It must not be a cached client: pages are read from the API server.
	Client   client.Client
	Recorder events.EventRecorder
	Log      logr.Logger
	// PageSize is how many objects are listed at once.
	PageSize int64
	// Progress, when set, is called after each object is rewritten with the
	// count so far (tests interrupt a run with it).
	Progress func(crd string, migrated int)
	// Path chooses who rewrites the objects; PathOperator when empty.
	Path Path
	// Discovery tells when the API server really stores objects in a new
	// storage version (see waitStorageServed); no wait when nil.
	Discovery discovery.DiscoveryInterface
	// BuiltinStartTimeout: with PathAuto, how long a StorageVersionMigration
	// may go untaken before the operator rewrites the objects itself;
	// DefaultBuiltinStartTimeout when zero.
	BuiltinStartTimeout time.Duration
}

// Result of migrating one CRD.
type Result struct {
	CRD      string
	Storage  string
	Migrated int
	// UpToDate: storedVersions already held the storage version alone.
	UpToDate bool
	// Path is who rewrote the objects (builtin or operator).
	Path Path
	// ManagedFieldsCleaned is how many objects lost managedFields entries
	// of versions no longer served.
	ManagedFieldsCleaned int
}

// Migrate migrates every CRD named, one after the other.
func (m *Migrator) Migrate(ctx context.Context, crdNames ...string) ([]Result, error) {
	var results []Result
	for _, name := range crdNames {
		r, err := m.MigrateCRD(ctx, name)
		results = append(results, r)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// MigrateCRD rewrites every object of one CRD in its storage version, then
// sets storedVersions to the storage version alone. It is idempotent, and an
// interrupted run is completed by the next.
func (m *Migrator) MigrateCRD(ctx context.Context, name string) (Result, error) {
	res := Result{CRD: name}
	crd, storage, err := m.storage(ctx, name)
	if err != nil {
		return res, m.fail(name, nil, err)
	}
	res.Storage = storage
	if slices.Equal(crd.Status.StoredVersions, []string{storage}) {
		res.UpToDate = true
		if err := m.cleanRetired(ctx, crd, storage, &res); err != nil {
			return res, err
		}
		runs.WithLabelValues(name, "up_to_date", "none").Inc()
		pending.WithLabelValues(name).Set(0)
		return res, nil
	}
	if err := m.rewriteStored(ctx, crd, storage, &res); err != nil {
		return res, m.fail(name, crd, err)
	}
	trimmed, err := m.trimStoredVersions(ctx, name, storage)
	if err != nil {
		return res, m.fail(name, crd, err)
	}
	// The CRD as it is now (the versions served now, not when the run began).
	if err := m.cleanRetired(ctx, trimmed, storage, &res); err != nil {
		return res, err
	}
	runs.WithLabelValues(name, "migrated", string(res.Path)).Inc()
	pending.WithLabelValues(name).Set(0)
	m.Log.Info("migrated stored objects", "crd", name, "storageVersion", storage, "migrated", res.Migrated, "path", res.Path)
	m.recordMigrated(crd, storage, res)
	return res, nil
}

// rewriteStored has every stored object of crd rewritten in storage: by
// kube-controller-manager (a StorageVersionMigration) or, without one, by
// the operator; res says which path and how many it rewrote.
func (m *Migrator) rewriteStored(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string, res *Result) error {
	log := m.Log.WithValues("crd", crd.Name, "storageVersion", storage, "storedVersions", crd.Status.StoredVersions)
	var err error
	if res.Path, err = m.choosePath(ctx); err != nil {
		return err
	}
	log.Info("migrating stored objects to the storage version", "path", res.Path)
	if err := m.waitStorageServed(ctx, crd, storage); err != nil {
		return err
	}
	if res.Path == PathBuiltin {
		err := m.migrateBuiltin(ctx, crd, storage)
		switch {
		case err == nil:
		case m.Path == PathAuto && errors.Is(err, errNoMigrationController):
			log.Info("falling back to the operator's own rewrites", "reason", err.Error())
			res.Path = PathOperator
		default:
			return err
		}
	}
	if res.Path == PathOperator {
		if res.Migrated, err = m.rewriteAll(ctx, crd, storage); err != nil {
			return err
		}
	}
	return nil
}

// trimStoredVersions sets the CRD's storedVersions to storage alone.
// kube-controller-manager trims them itself after a StorageVersionMigration,
// unless the CRD changed meanwhile; trimming again is harmless, and covers
// that case. It returns the CRD as written.
func (m *Migrator) trimStoredVersions(ctx context.Context, name, storage string) (*apiextensionsv1.CustomResourceDefinition, error) {
	var trimmed *apiextensionsv1.CustomResourceDefinition
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, now, err := m.storage(ctx, name)
		if err != nil {
			return err
		}
		if now != storage {
			return fmt.Errorf("%w: %s, then %s", ErrStorageVersionChanged, storage, now)
		}
		fresh.Status.StoredVersions = []string{storage}
		trimmed = fresh
		return m.Client.Status().Update(ctx, fresh)
	})
	if err != nil {
		return nil, fmt.Errorf("set storedVersions of %s: %w", name, err)
	}
	return trimmed, nil
}

// recordMigrated records the Migrated Event on the CRD, saying who
// rewrote its objects.
func (m *Migrator) recordMigrated(crd *apiextensionsv1.CustomResourceDefinition, storage string, res Result) {
	if m.Recorder == nil {
		return
	}
	who := fmt.Sprintf("rewrote %d object(s)", res.Migrated)
	if res.Path == PathBuiltin {
		who = "kube-controller-manager rewrote every object (StorageVersionMigration " + MigrationName(crd.Name) + ")"
	}
	m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonMigrated, "Migrate",
		"%s in %s; storedVersions is now [%s]", who, storage, storage)
}

// cleanRetired cleans the managedFields of versions the CRD no longer
// serves (see CleanManagedFields). It runs on every start: a retired
// version is usually removed from the CRD altogether, so the CRD cannot say
// whether objects still name it; one metadata listing per CRD can.
func (m *Migrator) cleanRetired(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string, res *Result) error {
	n, err := m.CleanManagedFields(ctx, crd, storage)
	res.ManagedFieldsCleaned = n
	if err != nil {
		return m.fail(crd.Name, crd, err)
	}
	if n > 0 {
		m.Log.Info("removed managedFields entries of versions no longer served", "crd", crd.Name, "objects", n)
		if m.Recorder != nil {
			m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonManagedFieldsCleaned, "Migrate",
				"removed managedFields entries of versions no longer served from %d object(s)", n)
		}
	}
	return nil
}

// storage returns the CRD and its storage version.
func (m *Migrator) storage(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, string, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return nil, "", fmt.Errorf("read CRD %s: %w", name, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return crd, v.Name, nil
		}
	}
	return nil, "", fmt.Errorf("CRD %s has no storage version", name)
}

func (m *Migrator) fail(name string, crd *apiextensionsv1.CustomResourceDefinition, err error) error {
	runs.WithLabelValues(name, "failed", "none").Inc()
	pending.WithLabelValues(name).Set(1)
	m.Log.Error(err, "storage version migration failed", "crd", name)
	if m.Recorder != nil && crd != nil {
		m.Recorder.Eventf(crd, nil, corev1.EventTypeWarning, ReasonMigrationFailed, "Migrate", "%s", err.Error())
	}
	return err
}

// ObjectsMigrated returns the counter of objects rewritten for a CRD.
func ObjectsMigrated(crd string) prometheus.Counter { return objectsMigrated.WithLabelValues(crd) }

// RunCount is how many migration runs of a CRD had an outcome (migrated,
// up_to_date, failed), by any path.
func RunCount(crd, outcome string) float64 {
	var n float64
	for _, path := range []string{"none", string(PathBuiltin), string(PathOperator)} {
		n += counter.Value(runs.WithLabelValues(crd, outcome, path))
	}
	return n
}
