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

package monitoring

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestDesired(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: DeploymentName, UID: types.UID("u-1")}
	objs, err := Desired("ops", owner)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ kind, name string }{
		{"ServiceMonitor", "vault-keycloak-operator-controller-manager-metrics-monitor"},
		{"PrometheusRule", "vault-keycloak-operator-alerts"},
	}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want %d", len(objs), len(want))
	}
	for i, w := range want {
		o := objs[i]
		if o.GetKind() != w.kind || o.GetName() != w.name || o.GetNamespace() != "ops" {
			t.Errorf("object %d: %s %s/%s, want %s ops/%s", i, o.GetKind(), o.GetNamespace(), o.GetName(), w.kind, w.name)
		}
		if refs := o.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "u-1" || refs[0].Controller != nil || refs[0].BlockOwnerDeletion != nil {
			t.Errorf("%s: owner references %+v, want the Deployment's alone, neither controller nor blocking", w.kind, refs)
		}
		if o.GetLabels()[ManagedByLabel] != managedBy {
			t.Errorf("%s: labels %v, want %s=%s", w.kind, o.GetLabels(), ManagedByLabel, managedBy)
		}
	}
	groups, _, _ := unstructured.NestedSlice(objs[1].Object, "spec", "groups")
	if len(groups) == 0 {
		t.Errorf("the PrometheusRule has no rule groups")
	}
	// The scrape the alerts are written for: the metrics' own labels kept.
	endpoints, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["honorLabels"] != true {
		t.Errorf("ServiceMonitor endpoints %v, want one with honorLabels", endpoints)
	}
}

func TestDecide(t *testing.T) {
	labelled := func(by string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if by != "" {
			u.SetLabels(map[string]string{ManagedByLabel: by})
		}
		return u
	}
	for _, tc := range []struct {
		name     string
		served   bool
		existing *unstructured.Unstructured
		want     Action
	}{
		{"API not served", false, nil, WaitForAPI},
		{"none yet", true, nil, Apply},
		{"the operator's, repaired", true, labelled(managedBy), Apply},
		{"the Helm chart's", true, labelled("Helm"), LeaveForeign},
		{"an admin's kubectl apply, unlabelled", true, labelled(""), LeaveForeign},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.served, tc.existing); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}
