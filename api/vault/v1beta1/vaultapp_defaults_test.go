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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVaultAppSetDefaults(t *testing.T) {
	for name, tc := range map[string]struct {
		spec     VaultAppSpec
		tokenTTL time.Duration
		want     func(*testing.T, VaultAppSpec)
	}{
		"empty spec": {VaultAppSpec{}, 0, func(t *testing.T, s VaultAppSpec) {
			if len(s.KubernetesAuth.ServiceAccounts) != 1 || s.KubernetesAuth.ServiceAccounts[0] != "shop-api" {
				t.Errorf("serviceAccounts = %v, want the VaultApp's name", s.KubernetesAuth.ServiceAccounts)
			}
			if s.KubernetesAuth.TokenTTL.Duration != DefaultTokenTTL || s.RefreshInterval.Duration != DefaultRefreshInterval || s.DeletionPolicy != DeletionPolicyDelete {
				t.Errorf("defaults = %v, %v, %q", s.KubernetesAuth.TokenTTL, s.RefreshInterval, s.DeletionPolicy)
			}
		}},
		"a server's cap lowers the default TTL": {VaultAppSpec{}, 20 * time.Minute, func(t *testing.T, s VaultAppSpec) {
			if s.KubernetesAuth.TokenTTL.Duration != 20*time.Minute {
				t.Errorf("tokenTTL = %v", s.KubernetesAuth.TokenTTL)
			}
		}},
		"set fields are kept": {VaultAppSpec{
			KubernetesAuth:  KubernetesAuthSpec{ServiceAccounts: []string{"worker"}, TokenTTL: &metav1.Duration{Duration: 2 * time.Hour}},
			RefreshInterval: &metav1.Duration{Duration: time.Minute}, DeletionPolicy: DeletionPolicyRetain,
		}, 20 * time.Minute, func(t *testing.T, s VaultAppSpec) {
			if s.KubernetesAuth.ServiceAccounts[0] != "worker" || s.KubernetesAuth.TokenTTL.Duration != 2*time.Hour ||
				s.RefreshInterval.Duration != time.Minute || s.DeletionPolicy != DeletionPolicyRetain {
				t.Errorf("a set field changed: %+v", s)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			app := &VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "shop-api"}, Spec: tc.spec}
			app.SetDefaults(tc.tokenTTL)
			tc.want(t, app.Spec)
		})
	}
}
