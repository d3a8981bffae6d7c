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

package tenancy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestSecretTypeRefusal(t *testing.T) {
	plain := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	tls := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tls", Annotations: map[string]string{
		AllowedSecretTypesAnnotation: "kubernetes.io/tls, kubernetes.io/service-account-token"}}}
	tests := []struct {
		ns   *corev1.Namespace
		typ  corev1.SecretType
		want string
	}{
		{plain, "", ""},
		{plain, corev1.SecretTypeOpaque, ""},
		{plain, corev1.SecretTypeTLS, `namespace plain does not allow Secrets of type "kubernetes.io/tls"`},
		{tls, corev1.SecretTypeTLS, ""},
		{tls, corev1.SecretTypeBasicAuth, "does not allow"},
		{tls, corev1.SecretTypeServiceAccountToken, "is managed by Kubernetes itself"},
		{plain, corev1.SecretTypeBootstrapToken, "is managed by Kubernetes itself"},
	}
	for _, tt := range tests {
		got := SecretTypeRefusal(tt.ns, tt.typ)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("SecretTypeRefusal(%s, %q) = %q, want %q", tt.ns.Name, tt.typ, got, tt.want)
		}
	}
}

func TestReservedKeys(t *testing.T) {
	for key, reserved := range map[string]bool{
		"app.kubernetes.io/managed-by":           true,
		"kubernetes.io/service-account.name":     true,
		"node.k8s.io/x":                          true,
		"secrets.carbogame.com/owner-name":       true,
		"Secrets.Carbogame.com/owner-name":       true,
		"vault.exemple.com/allowed-capabilities": true,
		"reloader.stakater.com/match":            false,
		"team":                                   false,
		"example.com/kubernetes.io":              false,
	} {
		if got := ReservedKey(key); got != reserved {
			t.Errorf("ReservedKey(%q) = %v, want %v", key, got, reserved)
		}
	}
	errs := ValidateTargetMetadata(field.NewPath("spec", "target"), map[string]string{"app.kubernetes.io/managed-by": "me"}, map[string]string{"secrets.carbogame.com/data-hash": "x"})
	want := `[spec.target.labels[app.kubernetes.io/managed-by]: Forbidden: is reserved`
	if len(errs) != 2 || !strings.HasPrefix(errs.ToAggregate().Error(), want) || !strings.Contains(errs.ToAggregate().Error(), "spec.target.annotations[secrets.carbogame.com/data-hash]") {
		t.Fatalf("errors = %v", errs.ToAggregate())
	}
}
