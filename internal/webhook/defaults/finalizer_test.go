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

package defaults

import (
	"context"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestTheFinalizerIsSetAtCreationOnly(t *testing.T) {
	const f = "example.com/cleanup"
	now := metav1.Now()
	for name, tc := range map[string]struct {
		op       admissionv1.Operation
		deleting bool
		want     bool
	}{
		"create":            {admissionv1.Create, false, true},
		"update":            {admissionv1.Update, false, false},
		"update (deleting)": {admissionv1.Update, true, false},
	} {
		obj := &corev1.ConfigMap{}
		if tc.deleting {
			obj.DeletionTimestamp = &now
		}
		ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tc.op}})
		AddFinalizerOnCreate(ctx, obj, f)
		if got := slices.Contains(obj.Finalizers, f); got != tc.want {
			t.Errorf("%s: finalizer set %v, want %v", name, got, tc.want)
		}
	}
	obj := &corev1.ConfigMap{}
	AddFinalizerOnCreate(context.Background(), obj, f)
	if len(obj.Finalizers) != 0 {
		t.Error("outside an admission request the finalizer was set")
	}
}
