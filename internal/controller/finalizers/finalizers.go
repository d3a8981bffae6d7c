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

// Package finalizers adds and releases the operator's finalizers with a
// patch of metadata.finalizers alone.
package finalizers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Set adds (or removes) a finalizer with a patch of
// metadata.finalizers alone, locked on the resourceVersion. An Update would
// send the whole object back as Go serializes it, and rewrite a spec the
// user wrote differently ("1h" comes back as "1h0m0s"): a needless write
// that bumps the generation.
func Set(ctx context.Context, c client.Client, obj client.Object, finalizer string, present bool) error {
	before := obj.DeepCopyObject().(client.Object)
	// One or the other: adding first and then removing would report a
	// change where there was none, and send an empty patch.
	var changed bool
	if present {
		changed = controllerutil.AddFinalizer(obj, finalizer)
	} else {
		changed = controllerutil.RemoveFinalizer(obj, finalizer)
	}
	if !changed {
		return nil
	}
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("set finalizer %s=%v: %w", finalizer, present, err)
	}
	return nil
}

// Release removes the finalizer once the cleanup it guarded is
// done. An object already gone is no error: its finalizer was the last one.
func Release(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if err := Set(ctx, c, obj, finalizer, false); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
