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

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The rewrite of every object of a CRD in its storage version, by the path
// chosen once per run.

// choosePath resolves PathAuto: the platform's path where the cluster
// serves it to the operator, the operator's otherwise.
func (m *Migrator) choosePath(ctx context.Context) (Path, error) {
	switch m.Path {
	case "", PathOperator:
		return PathOperator, nil
	case PathBuiltin:
		return PathBuiltin, m.builtinAvailable(ctx)
	}
	err := m.builtinAvailable(ctx)
	switch {
	case err == nil:
		return PathBuiltin, nil
	case errors.Is(err, errNoMigrationAPI):
		m.Log.Info("the cluster does not serve storagemigration.k8s.io/v1 to the operator: it rewrites the objects itself", "reason", err.Error())
		return PathOperator, nil
	}
	return "", err
}

// rewriteAll rewrites every object of the CRD, page by page, and returns
// how many; it stops if the storage version changes meanwhile.
func (m *Migrator) rewriteAll(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (int, error) {
	name, migrated := crd.Name, 0
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.ListKind}
	cont := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := m.Client.List(ctx, list, client.Limit(m.pageSize()), client.Continue(cont)); err != nil {
			return migrated, fmt.Errorf("list %s: %w", name, err)
		}
		for i := range list.Items {
			if err := m.rewrite(ctx, &list.Items[i]); err != nil {
				return migrated, err
			}
			migrated++
			objectsMigrated.WithLabelValues(name).Inc()
			if m.Progress != nil {
				m.Progress(name, migrated)
			}
		}
		// A new storage version means a new release is taking over: what
		// was rewritten so far may be in the wrong version again.
		if _, now, err := m.storage(ctx, name); err != nil {
			return migrated, err
		} else if now != storage {
			return migrated, fmt.Errorf("%w: %s, then %s", ErrStorageVersionChanged, storage, now)
		}
		if cont = list.GetContinue(); cont == "" {
			return migrated, nil
		}
		m.Log.Info("migration progress", "crd", name, "migrated", migrated)
	}
}

// rewrite updates an object unchanged: the API server stores it again, in
// the storage version. A conflict means someone wrote the object after it
// was listed, so after the storage version took effect: it is stored in
// that version already, and is done whoever wrote it (a tenant writing her
// own object meanwhile cannot make the run fail). Gone meanwhile, nothing
// is left to migrate.
func (m *Migrator) rewrite(ctx context.Context, obj *unstructured.Unstructured) error {
	switch err := m.Client.Update(ctx, obj); {
	case err == nil, apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("rewrite %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
}
