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

package v1beta1

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKeycloakClientCredentialSetDefaults(t *testing.T) {
	empty := &KeycloakClientCredential{}
	empty.SetDefaults()
	s := empty.Spec
	if s.RefreshInterval.Duration != DefaultRefreshInterval || s.DeletionPolicy != DeletionPolicyDelete ||
		s.Target.Keys.ClientID != DefaultClientIDKey || s.Target.Keys.ClientSecret != DefaultClientSecretKey || s.Target.Type != corev1.SecretTypeOpaque {
		t.Errorf("defaults of an empty spec: %+v", s)
	}

	set := &KeycloakClientCredential{Spec: KeycloakClientCredentialSpec{
		RefreshInterval: &metav1.Duration{Duration: time.Hour}, DeletionPolicy: DeletionPolicyRetain,
		Target: TargetSpec{Keys: SecretKeys{ClientID: "id", ClientSecret: "secret"}, Type: corev1.SecretTypeBasicAuth},
	}}
	want := set.DeepCopy()
	set.SetDefaults()
	if set.Spec.RefreshInterval.Duration != want.Spec.RefreshInterval.Duration || set.Spec.DeletionPolicy != want.Spec.DeletionPolicy ||
		set.Spec.Target.Keys != want.Spec.Target.Keys || set.Spec.Target.Type != want.Spec.Target.Type {
		t.Errorf("a set field changed: %+v, want %+v", set.Spec, want.Spec)
	}
}
