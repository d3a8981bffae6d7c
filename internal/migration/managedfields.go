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
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CleanManagedFields removes, from every object of the CRD, the
// managedFields entries recorded through an API version the CRD no longer
// serves. The API server keeps such entries forever, and server-side apply
// fails on the object once their version is gone ("no corresponding type"):
// a kubectl apply --server-side or a GitOps tool would be stuck. Entries of
// served versions stay. It reads metadata only, writes only objects that
// hold such an entry, and returns how many it cleaned.
func (m *Migrator) CleanManagedFields(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (int, error) {
	served := map[string]bool{}
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served[crd.Spec.Group+"/"+v.Name] = true
		}
	}
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.ListKind}
	cleaned, cont := 0, ""
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk)
		if err := m.Client.List(ctx, list, client.Limit(m.pageSize()), client.Continue(cont)); err != nil {
			return cleaned, fmt.Errorf("list %s: %w", crd.Name, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			keep := make([]metav1.ManagedFieldsEntry, 0, len(obj.ManagedFields))
			for _, e := range obj.ManagedFields {
				if served[e.APIVersion] {
					keep = append(keep, e)
				}
			}
			if len(keep) == len(obj.ManagedFields) {
				continue
			}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.Kind})
			if err := m.replaceManagedFields(ctx, obj, keep); err != nil {
				return cleaned, err
			}
			cleaned++
		}
		if cont = list.GetContinue(); cont == "" {
			return cleaned, nil
		}
	}
}

// replaceManagedFields sets an object's managedFields, if it has not
// changed since it was read (the patch tests its resourceVersion: a
// concurrent writer's entry is never dropped). The API server ignores an
// empty list (clients unaware of the field send one); a list of one empty
// entry is how it is cleared.
func (m *Migrator) replaceManagedFields(ctx context.Context, obj *metav1.PartialObjectMetadata, keep []metav1.ManagedFieldsEntry) error {
	var value any = keep
	if len(keep) == 0 {
		value = []map[string]any{{}}
	}
	type operation struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	patch, err := json.Marshal([]operation{
		{Op: "test", Path: "/metadata/resourceVersion", Value: obj.ResourceVersion},
		{Op: "replace", Path: "/metadata/managedFields", Value: value},
	})
	if err != nil {
		return err
	}
	err = m.Client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch))
	switch {
	case apierrors.IsNotFound(err):
		return nil // gone meanwhile
	case apierrors.IsInvalid(err) || apierrors.IsConflict(err):
		// Written meanwhile (the test failed): the next start looks again.
		m.Log.Info("object changed while its managedFields were cleaned; left for the next run", "object", client.ObjectKeyFromObject(obj))
		return nil
	case err != nil:
		return fmt.Errorf("clean managedFields of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

func (m *Migrator) pageSize() int64 {
	if m.PageSize == 0 {
		return 100
	}
	return m.PageSize
}
