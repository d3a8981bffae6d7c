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

package reference

// writeMetrics writes the metrics table.
func writeMetrics(p *page, metrics []metricDoc) {
	p.heading(2, "Metrics")
	p.line("The metrics the operator registers, served on the manager's metrics endpoint (`--metrics-bind-address`)")
	p.line("next to the ones controller-runtime serves for every manager (`controller_runtime_*`, `workqueue_*`, `rest_client_*`, Go and process).\n")
	rows := make([][]string, 0, len(metrics))
	for _, m := range metrics {
		rows = append(rows, []string{code(m.Name), m.Type, codes(m.Labels), cell(m.Help)})
	}
	p.table([]string{"Metric", colType, "Labels", "Help"}, rows)
}
