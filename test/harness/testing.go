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

package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewNamespace creates a namespace of the test's own, with annotations (the
// cluster admin's grants), and returns its name.
func (op *Operator) NewNamespace(t testing.TB, annotations map[string]string) string {
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

// Conditioned is an object with status conditions.
type Conditioned[T any] interface {
	client.Object
	*T
}

// WaitCondition waits until obj's condition typ has the status and reason
// for its current generation; conditions returns obj's conditions.
func WaitCondition[T any, P Conditioned[T]](t testing.TB, op *Operator, key client.ObjectKey, conditions func(P) []metav1.Condition, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) P {
	t.Helper()
	obj := P(new(T))
	gomega.NewWithT(t).Eventually(func(g gomega.Gomega) {
		g.Expect(op.Client.Get(context.Background(), key, obj)).To(gomega.Succeed())
		c := meta.FindStatusCondition(conditions(obj), typ)
		g.Expect(c).NotTo(gomega.BeNil(), "condition %s not set yet", typ)
		g.Expect(c.Status).To(gomega.Equal(status), "condition %s: %s", typ, c.Message)
		g.Expect(c.Reason).To(gomega.Equal(reason), "condition %s: %s", typ, c.Message)
		g.Expect(c.ObservedGeneration).To(gomega.Equal(obj.GetGeneration()))
	}).WithTimeout(timeout).WithPolling(200 * time.Millisecond).Should(gomega.Succeed())
	return obj
}

// Events returns the messages of the Events recorded about an object, by reason.
func (op *Operator) Events(t *testing.T, namespace, name string) map[string][]string {
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

// WaitEvent waits until an Event with the reason is recorded about the object.
func (op *Operator) WaitEvent(t *testing.T, namespace, name, reason string) {
	t.Helper()
	gomega.NewWithT(t).Eventually(func() map[string][]string { return op.Events(t, namespace, name) }).
		WithTimeout(10 * time.Second).Should(gomega.HaveKey(reason))
}

// Kubectl runs the kubectl built beside kube-apiserver against the test's
// API server, and returns what it printed.
func (op *Operator) Kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := op.RunKubectl(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// RunKubectl runs kubectl against the operator's API server.
func (op *Operator) RunKubectl(args ...string) (string, error) {
	out, err := exec.Command(op.KubectlPath, append([]string{"--kubeconfig", op.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %v: %w\n%s", args, err, out)
	}
	return string(out), nil
}

// Eventually retries check until it passes, and fails the test with the
// last error when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
