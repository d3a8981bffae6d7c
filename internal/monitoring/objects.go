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

// Package monitoring installs the operator's own ServiceMonitor and
// PrometheusRule (config/prometheus) in its namespace, where the cluster
// serves the Prometheus Operator's API. They are not in the OLM bundle:
// OLM fails a whole InstallPlan on a kind the cluster does not serve, and
// most clusters have no Prometheus Operator. The objects are owned by the
// operator's Deployment, so they go when it goes (an alert that the
// operator is down must not outlive an uninstall).
package monitoring

import (
	"bytes"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/carbogame/vault-keycloak-operator/config/prometheus"
)

const (
	// DeploymentName is the operator's Deployment (the bundle's and
	// config/default's), which owns what this package installs.
	DeploymentName = "vault-keycloak-operator-controller-manager"
	// FieldOwner is the field manager of the installs.
	FieldOwner = "vault-keycloak-operator"
	// ManagedByLabel says who wrote an object; the operator updates only the
	// objects that say it did.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "vault-keycloak-operator"
	// namePrefix is config/default's, which kustomize and the chart add.
	namePrefix = "vault-keycloak-operator-"
	// GroupVersion is the Prometheus Operator's API.
	GroupVersion = "monitoring.coreos.com/v1"
)

// Desired returns the objects the operator installs in namespace, owned by
// owner: config/prometheus's, named as the Helm chart names them.
func Desired(namespace string, owner metav1.OwnerReference) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for file, data := range map[string][]byte{"monitor.yaml": prometheus.ServiceMonitor, "alerts.yaml": prometheus.Alerts} {
		u := &unstructured.Unstructured{}
		if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&u.Object); err != nil {
			return nil, fmt.Errorf("config/prometheus/%s: %w", file, err)
		}
		if u.GetAPIVersion() != GroupVersion {
			return nil, fmt.Errorf("config/prometheus/%s: %s is not of %s", file, u.GetKind(), GroupVersion)
		}
		if !strings.HasPrefix(u.GetName(), namePrefix) {
			u.SetName(namePrefix + u.GetName())
		}
		u.SetNamespace(namespace)
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[ManagedByLabel] = managedBy
		u.SetLabels(labels)
		u.SetOwnerReferences([]metav1.OwnerReference{owner})
		out = append(out, u)
	}
	// ServiceMonitor first: the rules' VKOOperatorDown needs the scrape.
	if out[0].GetKind() != "ServiceMonitor" {
		out[0], out[1] = out[1], out[0]
	}
	return out, nil
}

// Action is what Decide says to do with one desired object.
type Action string

const (
	// Apply writes the object (creates it, or repairs the operator's fields).
	Apply Action = "Apply"
	// WaitForAPI: the cluster does not serve the object's kind (yet).
	WaitForAPI Action = "WaitForAPI"
	// LeaveForeign: an object of that name exists that the operator did not
	// write (the Helm chart's, an admin's kubectl apply): it is left as is.
	LeaveForeign Action = "LeaveForeign"
)

// Decide says what to do with a desired object, given whether its kind is
// served and the object of its name (nil when there is none).
func Decide(served bool, existing *unstructured.Unstructured) Action {
	switch {
	case !served:
		return WaitForAPI
	case existing != nil && existing.GetLabels()[ManagedByLabel] != managedBy:
		return LeaveForeign
	default:
		return Apply
	}
}
