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

package alerts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name, Type, Query string
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID          int    `json:"id"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Datasource  struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// controllerRuntimeMetrics are the controller-runtime (and API server) metrics the
// dashboard reads (the operator's own are checked against its source).
var controllerRuntimeMetrics = []string{
	"controller_runtime_webhook_requests_total", "controller_runtime_reconcile_errors_total", "controller_runtime_webhook_panics_total",
	"apiserver_admission_webhook_rejection_count", "leader_election_master_status",
}

// The Grafana dashboard: every panel's query is PromQL promtool accepts,
// reads metrics that exist, through the dashboard's data source variable;
// and the signal of every shipped alert has a panel that names it.
func TestDashboardQueriesAreValidAndCoverEveryAlert(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "config", "grafana", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if d.UID == "" || d.Title == "" || len(d.Templating.List) != 1 || d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Fatalf("the dashboard needs a uid, a title and one Prometheus data source variable")
	}
	source := operatorSource(t)
	var rules []map[string]any
	descriptions := ""
	for _, p := range d.Panels {
		descriptions += p.Description + "\n"
		if p.Datasource.UID != "${"+d.Templating.List[0].Name+"}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: no query, or not through the data source variable", p.Title)
		}
		for i, target := range p.Targets {
			rules = append(rules, map[string]any{"record": fmt.Sprintf("vko:dashboard_panel_%d_%d", p.ID, i), "expr": target.Expr})
			names := vkoMetric.FindAllString(target.Expr, -1)
			for _, name := range names {
				if !strings.Contains(source, `"`+name+`"`) {
					t.Errorf("panel %q reads %s, which the operator does not define", p.Title, name)
				}
			}
			known := len(names) > 0
			for _, name := range controllerRuntimeMetrics {
				known = known || strings.Contains(target.Expr, name)
			}
			if !known {
				t.Errorf("panel %q reads no metric of the operator's: %s", p.Title, target.Expr)
			}
		}
	}
	// promtool parses every query as a recording rule's.
	dir := t.TempDir()
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard.rules.yaml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, dir, "check", "rules", "dashboard.rules.yaml")

	_, rule := rulesDir(t)
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "VKOOperatorDown" && !strings.Contains(descriptions, r.Alert) {
				t.Errorf("alert %s: no panel of the dashboard shows its signal (name it in the panel's description)", r.Alert)
			}
		}
	}
}
