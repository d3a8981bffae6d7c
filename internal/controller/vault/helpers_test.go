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

package vault_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
)

// newNamespace creates a namespace of its own for a test, with the given
// annotations (the cluster admin's grants).
func newNamespace(t *testing.T, annotations map[string]string) string {
	t.Helper()
	name := strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-"))
	if len(name) > 40 {
		name = name[:40]
	}
	name = fmt.Sprintf("%s-%04d", strings.Trim(name, "-"), rand.IntN(10000))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	if err := op.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return name
}

// allowAll is the grant of a namespace that may use every capability.
var allowAll = map[string]string{tenancy.AllowedCapabilitiesAnnotation: "create,read,update,patch,delete,list"}

// waitCondition waits until the VaultApp's condition has the status and
// reason, and returns the VaultApp as it was then.
func waitCondition(t *testing.T, key client.ObjectKey, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *vaultv1beta1.VaultApp {
	t.Helper()
	g := NewWithT(t)
	app := &vaultv1beta1.VaultApp{}
	g.Eventually(func(g Gomega) {
		g.Expect(op.Client.Get(context.Background(), key, app)).To(Succeed())
		c := meta.FindStatusCondition(app.Status.Conditions, typ)
		g.Expect(c).NotTo(BeNil(), "condition %s not set yet", typ)
		g.Expect(c.Status).To(Equal(status), "condition %s: %s", typ, c.Message)
		g.Expect(c.Reason).To(Equal(reason), "condition %s: %s", typ, c.Message)
		g.Expect(c.ObservedGeneration).To(Equal(app.Generation))
	}).WithTimeout(timeout).WithPolling(200 * time.Millisecond).Should(Succeed())
	return app
}

// events returns the Events recorded about an object, by reason.
func events(t *testing.T, namespace, name string) map[string][]string {
	t.Helper()
	var list corev1.EventList
	if err := op.Client.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		t.Fatalf("list events: %v", err)
	}
	out := map[string][]string{}
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name {
			out[e.Reason] = append(out[e.Reason], e.Message)
		}
	}
	return out
}

// waitEvent waits until an Event with the reason is recorded about the object.
func waitEvent(t *testing.T, namespace, name, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func() map[string][]string { return events(t, namespace, name) }).
		WithTimeout(10 * time.Second).Should(HaveKey(reason))
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
