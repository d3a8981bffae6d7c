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

package vaultapp_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// allowAll is the grant of a namespace that may use every capability.
var allowAll = map[string]string{tenancy.AllowedCapabilitiesAnnotation: "create,read,update,patch,delete,list"}

func newNamespace(t *testing.T, annotations map[string]string) string {
	t.Helper()
	return op.NewNamespace(t, annotations)
}

// waitCondition waits until the VaultApp's condition has the status and
// reason, and returns the VaultApp as it was then.
func waitCondition(t *testing.T, key client.ObjectKey, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *vaultv1beta1.VaultApp {
	t.Helper()
	return harness.WaitCondition(t, op, key, func(a *vaultv1beta1.VaultApp) []metav1.Condition { return a.Status.Conditions }, typ, status, reason, timeout)
}

func waitEvent(t *testing.T, namespace, name, reason string) {
	t.Helper()
	op.WaitEvent(t, namespace, name, reason)
}

// readPolicy reads a policy as the Vault administrator.
func readPolicy(t *testing.T, name string) string {
	t.Helper()
	text, err := admin.Sys().GetPolicy(name)
	if err != nil {
		t.Fatalf("read policy %s: %v", name, err)
	}
	return text
}

// readRole reads a Kubernetes-auth role as the Vault administrator; nil when absent.
func readRole(t *testing.T, name string) map[string]any {
	t.Helper()
	secret, err := admin.Logical().Read("auth/kubernetes/role/" + name)
	if err != nil {
		t.Fatalf("read role %s: %v", name, err)
	}
	if secret == nil {
		return nil
	}
	return secret.Data
}

// vaultclientOps sorts the operations counted in the operator's metrics.
var vaultclientOps = struct{ reads, writes []string }{
	reads:  []string{vaultclient.OpReadPolicy, vaultclient.OpReadRole},
	writes: []string{vaultclient.OpWritePolicy, vaultclient.OpWriteRole, vaultclient.OpDeletePolicy, vaultclient.OpDeleteRole},
}

func vaultRequests(ops ...string) float64 {
	var n float64
	for _, o := range ops {
		n += vaultclient.RequestCount(o)
	}
	return n
}
