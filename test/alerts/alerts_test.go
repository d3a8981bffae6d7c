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

// Package alerts unit-tests the shipped alert rules with the real promtool.
package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// promtoolEnv names promtool (make test sets it from hack/ensure.sh).
const promtoolEnv = "VKO_PROMTOOL"

type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// rulesDir writes the PrometheusRule's groups as a plain rule file beside
// the promtool tests, as Prometheus reads them, and returns the directory.
func rulesDir(t *testing.T) (string, prometheusRule) {
	t.Helper()
	src := filepath.Join(harness.RepoRoot(), "config", "prometheus")
	raw, err := os.ReadFile(filepath.Join(src, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var whole map[string]any
	if err := yaml.Unmarshal(raw, &whole); err != nil {
		t.Fatal(err)
	}
	var rule prometheusRule
	if err := yaml.Unmarshal(raw, &rule); err != nil {
		t.Fatal(err)
	}
	rules, err := yaml.Marshal(whole["spec"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests, err := os.ReadFile(filepath.Join(src, "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"alerts.rules.yaml": rules, "alerts_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, rule
}

func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	bin := os.Getenv(promtoolEnv)
	if bin == "" {
		t.Fatalf("%s is not set: run make test, or point it at hack/ensure.sh promtool's promtool", promtoolEnv)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestAlertRulesAreValidAndEachBehavesAsItsTestsSay(t *testing.T) {
	dir, _ := rulesDir(t)
	promtool(t, dir, "check", "rules", "alerts.rules.yaml")
	promtool(t, dir, "test", "rules", "alerts_test.yaml")
}

// Every alert shipped has a promtool test that expects it to fire, and
// reads only metrics the operator defines (a renamed metric would leave an
// alert that never fires, with tests still green on hand-written series).
func TestEveryAlertIsTestedAndReadsTheOperatorsMetrics(t *testing.T) {
	dir, rule := rulesDir(t)
	raw, err := os.ReadFile(filepath.Join(dir, "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				AlertName string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(raw, &tests); err != nil {
		t.Fatal(err)
	}
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.AlertName] = true
			}
		}
	}
	source := operatorSource(t)
	n := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			n++
			if !fires[r.Alert] {
				t.Errorf("alert %s has no promtool test that expects it to fire", r.Alert)
			}
			for _, name := range vkoMetric.FindAllString(r.Expr, -1) {
				if !strings.Contains(source, `"`+name+`"`) {
					t.Errorf("alert %s reads %s, which the operator does not define", r.Alert, name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no alert found in config/prometheus/alerts.yaml")
	}
}

var vkoMetric = regexp.MustCompile(`vko_[a-z_]+`)

// operatorSource is the operator's non-test Go source, where its metrics
// are named.
func operatorSource(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(filepath.Join(harness.RepoRoot(), "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
