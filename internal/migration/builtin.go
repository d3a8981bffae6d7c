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

package migration

import (
	"context"
	"errors"
	"fmt"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Path says who rewrites the stored objects.
type Path string

const (
	// PathAuto is the platform's where the cluster serves
	// storagemigration.k8s.io/v1 and its controller runs, the operator's
	// otherwise.
	PathAuto Path = "auto"
	// PathBuiltin: a StorageVersionMigration per CRD, which
	// kube-controller-manager's storage-version-migrator runs (Kubernetes
	// 1.37+); it also trims storedVersions.
	PathBuiltin Path = "builtin"
	// PathOperator: the operator's own no-op rewrites (any Kubernetes).
	PathOperator Path = "operator"
)

// ParsePath reads a --storage-migration value.
func ParsePath(s string) (Path, error) {
	switch p := Path(s); p {
	case PathAuto, PathBuiltin, PathOperator:
		return p, nil
	}
	return "", fmt.Errorf("storage migration path %q: must be one of auto, builtin, operator", s)
}

// DefaultBuiltinStartTimeout is how long auto waits for
// kube-controller-manager to take up a StorageVersionMigration before it
// concludes that the controller does not run and rewrites the objects itself.
const DefaultBuiltinStartTimeout = 2 * time.Minute

// errNoMigrationController: the StorageVersionMigration was not taken up.
var errNoMigrationController = errors.New("no storage-version-migrator controller took up the StorageVersionMigration")

// errNoMigrationAPI: the cluster does not serve storagemigration.k8s.io/v1
// (before Kubernetes 1.37, or switched off), or the operator may not use it.
var errNoMigrationAPI = errors.New("storagemigration.k8s.io/v1 is not available")

// MigrationName is the StorageVersionMigration the operator creates for a
// CRD: the same name each time, so that a restarted manager finds the one
// it was waiting for.
func MigrationName(crd string) string { return "vko-" + crd }

// builtinAvailable reports whether the cluster serves the
// StorageVersionMigration API to the operator.
func (m *Migrator) builtinAvailable(ctx context.Context) error {
	err := m.Client.List(ctx, &svmv1.StorageVersionMigrationList{}, client.Limit(1))
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		return fmt.Errorf("%w: %w", errNoMigrationAPI, err)
	}
	return err
}

// migrateBuiltin has kube-controller-manager rewrite every object of the
// CRD: it creates (or finds) the CRD's StorageVersionMigration and waits
// for its Succeeded or Failed condition.
func (m *Migrator) migrateBuiltin(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) error {
	svm, err := m.ensureMigration(ctx, crd, storage)
	if err != nil {
		return err
	}
	return m.waitMigration(ctx, svm)
}

// ensureMigration returns the operator's StorageVersionMigration of the
// CRD for storage: the one a previous run left under way, or a new one
// (replacing one that finished or was made for another storage version).
func (m *Migrator) ensureMigration(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (*svmv1.StorageVersionMigration, error) {
	name := MigrationName(crd.Name)
	log := m.Log.WithValues("crd", crd.Name, "storageVersionMigration", name)
	resource := metav1.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}
	svm := &svmv1.StorageVersionMigration{}
	err := m.Client.Get(ctx, client.ObjectKey{Name: name}, svm)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("read StorageVersionMigration %s: %w", name, err)
	case svm.Labels[managedByLabel] != managedByValue || svm.Spec.Resource != resource:
		// Never touched: someone else's object under the operator's name.
		return nil, fmt.Errorf("StorageVersionMigration %s exists and is not the operator's (label %s=%q, resource %s)",
			name, managedByLabel, svm.Labels[managedByLabel], svm.Spec.Resource)
	case finished(svm) || svm.Annotations[storageVersionAnnotation] != storage:
		// Done before (by an earlier release's migration, or it failed),
		// or made for another storage version: a migration runs once, to
		// the storage version of its time. It is replaced.
		log.Info("replacing a StorageVersionMigration", "conditions", svm.Status.Conditions, "madeFor", svm.Annotations[storageVersionAnnotation])
		if err := m.deleteMigration(ctx, svm); err != nil {
			return nil, err
		}
	default:
		log.Info("waiting for the StorageVersionMigration a previous run created")
		return svm, nil
	}
	svm = &svmv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{managedByLabel: managedByValue},
			Annotations: map[string]string{storageVersionAnnotation: storage}},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: resource},
	}
	if err := m.Client.Create(ctx, svm); err != nil {
		return nil, fmt.Errorf("create StorageVersionMigration %s: %w", name, err)
	}
	log.Info("created a StorageVersionMigration; kube-controller-manager rewrites the objects", "storageVersion", storage)
	return svm, nil
}

// waitMigration waits for svm's Succeeded or Failed condition; one that no
// controller takes up within BuiltinStartTimeout is deleted and reported
// as errNoMigrationController.
func (m *Migrator) waitMigration(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	name := svm.Name
	startTimeout := m.BuiltinStartTimeout
	if startTimeout == 0 {
		startTimeout = DefaultBuiltinStartTimeout
	}
	created := svm.CreationTimestamp.Time
	if created.IsZero() {
		created = time.Now()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := m.Client.Get(ctx, client.ObjectKey{Name: name}, svm); err != nil {
			return fmt.Errorf("read StorageVersionMigration %s: %w", name, err)
		}
		if c := meta.FindStatusCondition(svm.Status.Conditions, string(svmv1.MigrationSucceeded)); c != nil && c.Status == metav1.ConditionTrue {
			return nil
		}
		if c := meta.FindStatusCondition(svm.Status.Conditions, string(svmv1.MigrationFailed)); c != nil && c.Status == metav1.ConditionTrue {
			return fmt.Errorf("StorageVersionMigration %s failed: %s: %s", name, c.Reason, c.Message)
		}
		if !takenUp(svm) && time.Since(created) > startTimeout {
			// Not left behind for a controller that may start one day
			// (unless it just did: the delete is for this very version).
			if err := m.deleteMigration(ctx, svm); err != nil {
				m.Log.Error(err, "delete the StorageVersionMigration nobody took up", "storageVersionMigration", name)
			}
			return fmt.Errorf("%w: %s has no status %s after its creation; is kube-controller-manager's %s controller running (with the garbage collector)?",
				errNoMigrationController, name, startTimeout, "storage-version-migrator")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Marks of the operator's StorageVersionMigrations.
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "vault-keycloak-operator"
	// storageVersionAnnotation records the storage version a migration
	// was made for.
	storageVersionAnnotation = "vault-keycloak-operator.carbogame.com/storage-version"
)

// deleteMigration deletes the operator's StorageVersionMigration as it was
// read: a version changed meanwhile (kube-controller-manager took it up) is
// left alone.
func (m *Migrator) deleteMigration(ctx context.Context, svm *svmv1.StorageVersionMigration) error {
	err := m.Client.Delete(ctx, svm, client.Preconditions{UID: &svm.UID, ResourceVersion: &svm.ResourceVersion})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete StorageVersionMigration %s: %w", svm.Name, err)
	}
	return nil
}

// finished reports a Succeeded or Failed StorageVersionMigration.
func finished(svm *svmv1.StorageVersionMigration) bool {
	for _, t := range []svmv1.MigrationConditionType{svmv1.MigrationSucceeded, svmv1.MigrationFailed} {
		if meta.IsStatusConditionTrue(svm.Status.Conditions, string(t)) {
			return true
		}
	}
	return false
}

// takenUp reports a StorageVersionMigration the controller has seen: it
// records the resource version it migrates up to, or a condition.
func takenUp(svm *svmv1.StorageVersionMigration) bool {
	return svm.Status.ResourceVersion != "" || len(svm.Status.Conditions) > 0
}
