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

// Package defaults holds what the defaulting webhooks of both groups share.
package defaults

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// AddFinalizerOnCreate sets the operator's cleanup finalizer on an object
// being created. The controller would add it on its first reconcile anyway;
// setting it here saves that write (a round trip through both admission
// webhooks) for every new object. Updates are left alone: removing the
// finalizer by hand stays possible, and the controller puts it back.
func AddFinalizerOnCreate(ctx context.Context, obj client.Object, finalizer string) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || req.Operation != admissionv1.Create || obj.GetDeletionTimestamp() != nil {
		return
	}
	controllerutil.AddFinalizer(obj, finalizer)
}
