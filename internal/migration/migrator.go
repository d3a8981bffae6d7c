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

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// ReasonMigrated and ReasonMigrationFailed are the reasons of the Events
// recorded on a CRD.
const (
	ReasonMigrated        = "StorageVersionMigrated"
	ReasonMigrationFailed = "StorageVersionMigrationFailed"
)

// ErrStorageVersionChanged stops a run whose CRD got a new storage version
// meanwhile (an upgrade in progress); the next run starts over.
var ErrStorageVersionChanged = errors.New("the CRD's storage version changed during the migration")

var (
	objectsMigrated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vko_storage_migration_objects_total",
		Help: "Objects rewritten in the storage version, by CRD.",
	}, []string{"crd"})
	runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vko_storage_migration_runs_total",
		Help: "Storage-version migrations, by CRD and outcome (migrated, up_to_date, failed).",
	}, []string{"crd", "outcome"})
)

func init() {
	metrics.Registry.MustRegister(objectsMigrated, runs)
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
}

// Result of migrating one CRD.
type Result struct {
	CRD      string
	Storage  string
	Migrated int
	// UpToDate: storedVersions already held the storage version alone.
	UpToDate bool
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
		runs.WithLabelValues(name, "up_to_date").Inc()
		return res, nil
	}
	log := m.Log.WithValues("crd", name, "storageVersion", storage, "storedVersions", crd.Status.StoredVersions)
	log.Info("migrating stored objects to the storage version")

	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.ListKind}
	pageSize := m.PageSize
	if pageSize == 0 {
		pageSize = 100
	}
	cont := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := m.Client.List(ctx, list, client.Limit(pageSize), client.Continue(cont)); err != nil {
			return res, m.fail(name, crd, fmt.Errorf("list %s: %w", name, err))
		}
		for i := range list.Items {
			if err := m.rewrite(ctx, &list.Items[i]); err != nil {
				return res, m.fail(name, crd, err)
			}
			res.Migrated++
			objectsMigrated.WithLabelValues(name).Inc()
			if m.Progress != nil {
				m.Progress(name, res.Migrated)
			}
		}
		// A new storage version means a new release is taking over: what
		// was rewritten so far may be in the wrong version again.
		if _, now, err := m.storage(ctx, name); err != nil {
			return res, m.fail(name, crd, err)
		} else if now != storage {
			return res, m.fail(name, crd, fmt.Errorf("%w: %s, then %s", ErrStorageVersionChanged, storage, now))
		}
		if cont = list.GetContinue(); cont == "" {
			break
		}
		log.Info("migration progress", "migrated", res.Migrated)
	}

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh, now, err := m.storage(ctx, name)
		if err != nil {
			return err
		}
		if now != storage {
			return fmt.Errorf("%w: %s, then %s", ErrStorageVersionChanged, storage, now)
		}
		fresh.Status.StoredVersions = []string{storage}
		return m.Client.Status().Update(ctx, fresh)
	})
	if err != nil {
		return res, m.fail(name, crd, fmt.Errorf("set storedVersions of %s: %w", name, err))
	}
	runs.WithLabelValues(name, "migrated").Inc()
	log.Info("migrated stored objects", "migrated", res.Migrated)
	if m.Recorder != nil {
		m.Recorder.Eventf(crd, nil, corev1.EventTypeNormal, ReasonMigrated, "Migrate",
			"rewrote %d object(s) in %s; storedVersions is now [%s]", res.Migrated, storage, storage)
	}
	return res, nil
}

// rewrite updates an object unchanged: the API server stores it again, in
// the storage version. A conflict means someone else just wrote it — and so
// stored it in the storage version already — but it is rewritten again
// from a fresh read to be sure.
func (m *Migrator) rewrite(ctx context.Context, obj *unstructured.Unstructured) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := m.Client.Update(ctx, obj)
		if apierrors.IsConflict(err) {
			if gerr := m.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); gerr != nil {
				return gerr
			}
		}
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile: nothing left to migrate
		}
		if err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("rewrite %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
		}
		return err
	})
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
	runs.WithLabelValues(name, "failed").Inc()
	m.Log.Error(err, "storage version migration failed", "crd", name)
	if m.Recorder != nil && crd != nil {
		m.Recorder.Eventf(crd, nil, corev1.EventTypeWarning, ReasonMigrationFailed, "Migrate", "%s", err.Error())
	}
	return err
}

// ObjectsMigrated returns the counter of objects rewritten for a CRD.
func ObjectsMigrated(crd string) prometheus.Counter { return objectsMigrated.WithLabelValues(crd) }

// Runs returns the counter of migration runs of a CRD with an outcome
// (migrated, up_to_date, failed).
func Runs(crd, outcome string) prometheus.Counter { return runs.WithLabelValues(crd, outcome) }
