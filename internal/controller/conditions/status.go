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

package conditions

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UpdateStatus writes obj's status, whose value now is, only when it differs
// from before: a reconcile that finds everything in step writes nothing.
// The update is locked on the resourceVersion, so a stale read fails and is
// retried rather than overwriting a newer status.
func UpdateStatus[S any](ctx context.Context, c client.Client, obj client.Object, before, now *S) error {
	if equality.Semantic.DeepEqual(before, now) {
		return nil
	}
	if err := c.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}
