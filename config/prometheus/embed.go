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

// Package prometheus carries the operator's monitoring objects (the
// ServiceMonitor and the PrometheusRule of its alerts) into the manager
// binary, which installs them where the cluster serves the Prometheus
// Operator's API (internal/monitoring). The YAML files stay the one source:
// kustomize, the Helm chart, promtool's tests and the manager read the same.
package prometheus

import _ "embed"

// ServiceMonitor is monitor.yaml: how Prometheus scrapes the operator.
//
//go:embed monitor.yaml
var ServiceMonitor []byte

// Alerts is alerts.yaml: the PrometheusRule of the operator's alerts.
//
//go:embed alerts.yaml
var Alerts []byte
