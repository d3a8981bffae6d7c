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
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// TestTheLargestAdmissibleObjectReadsInEveryVersion: one tenant's VaultApp
// with annotations as large as admission lets them be must not break
// v1alpha1 reads for anyone (a view that cannot fit its conversion data
// fails every LIST and WATCH of that version, cluster-wide). The webhook
// refuses what would not fit, naming the field and the rule; the largest
// object it admits reads in both versions by LIST and WATCH across
// namespaces, beside another team's object.
func TestTheLargestAdmissibleObjectReadsInEveryVersion(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	big, other := newNamespace(t, nil), newNamespace(t, allowAll)
	withNote := func(size int) *vaultv1beta1.VaultApp {
		// serverRef has no v1alpha1 field: the v1alpha1 view needs the
		// conversion-data annotation.
		return &vaultv1beta1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: big, Name: "big", Annotations: map[string]string{"note": strings.Repeat("x", size)}},
			Spec: vaultv1beta1.VaultAppSpec{
				ServerRef: &vaultv1beta1.ServerReference{Name: "not-there"},
				Policy:    vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}}}},
			},
		}
	}
	const limit = 256 * 1024
	err := op.Client.Create(ctx, withNote(limit-len("note")), client.DryRunAll)
	g.Expect(err).To(MatchError(ContainSubstring(`metadata.annotations: Forbidden: take 262144 bytes, which leaves too little room under the API server's limit of 262144 bytes for the vault.exemple.com/conversion-data annotation that the v1alpha1 view of this object needs to convert without loss`)))

	// The largest size admitted, found by dry runs.
	lo, hi := 0, limit-len("note") // lo admitted, hi refused
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if op.Client.Create(ctx, withNote(mid), client.DryRunAll) == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	g.Expect(limit-len("note")-lo).To(BeNumerically("<", 1024), "the webhook keeps more room than the v1alpha1 view needs")
	g.Expect(op.Client.Create(ctx, withNote(lo))).To(Succeed())
	neighbour := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "neighbour"},
		Spec:       vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}},
	}
	g.Expect(op.Client.Create(ctx, neighbour)).To(Succeed())

	dyn, err := dynamic.NewForConfig(op.Config)
	g.Expect(err).NotTo(HaveOccurred())
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		t.Run(version, func(t *testing.T) {
			g := NewWithT(t)
			res := dyn.Resource(schema.GroupVersionResource{Group: "vault.exemple.com", Version: version, Resource: "vaultapps"})
			list, err := res.List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "cluster-wide LIST as %s", version)
			g.Expect(names(list.Items)).To(ContainElements(big+"/big", other+"/neighbour"))
			for _, u := range list.Items {
				if u.GetNamespace() == big && version == "v1alpha1" {
					g.Expect(u.GetAnnotations()).To(HaveKey("vault.exemple.com/conversion-data"), "the v1alpha1 view lost serverRef")
				}
			}

			w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
			g.Expect(err).NotTo(HaveOccurred())
			defer w.Stop()
			// A change to each object must reach a cluster-wide watch.
			for _, key := range []client.ObjectKey{{Namespace: big, Name: "big"}, {Namespace: other, Name: "neighbour"}} {
				var a vaultv1beta1.VaultApp
				g.Expect(op.Client.Get(ctx, key, &a)).To(Succeed())
				patch := client.MergeFrom(a.DeepCopy())
				if a.Labels == nil {
					a.Labels = map[string]string{}
				}
				a.Labels["seen-by"] = version
				g.Expect(op.Client.Patch(ctx, &a, patch)).To(Succeed())
			}
			seen := map[string]bool{}
			deadline := time.After(20 * time.Second)
			for len(seen) < 2 {
				select {
				case e, ok := <-w.ResultChan():
					g.Expect(ok).To(BeTrue(), "the %s watch closed", version)
					g.Expect(e.Type).NotTo(Equal(watch.Error), "the %s watch failed: %v", version, e.Object)
					u := e.Object.(*unstructured.Unstructured)
					if u.GetLabels()["seen-by"] == version {
						seen[u.GetNamespace()+"/"+u.GetName()] = true
					}
				case <-deadline:
					t.Fatalf("the %s watch delivered only %v", version, seen)
				}
			}
		})
	}
}

func names(items []unstructured.Unstructured) []string {
	out := make([]string, len(items))
	for i, u := range items {
		out[i] = u.GetNamespace() + "/" + u.GetName()
	}
	return out
}
