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

import (
	"fmt"
	"go/ast"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/carbogame/vault-keycloak-operator/hack/release/reference/recorder"
	// Linked for its init functions: the manager's packages register the
	// operator's metrics as they are initialized (recorder notes them).
	_ "github.com/carbogame/vault-keycloak-operator/internal/manager"
)

// metricDoc is one metric the operator registers.
type metricDoc struct {
	Name, Type, Help string
	Labels           []string
	Package          string // import path of the registering package
}

// operatorMetrics are the metrics the manager's own packages registered
// with controller-runtime's registry in this process (recorder), each
// described by its collector. The sources say which packages register
// metrics: one whose registrations this process did not see fails here.
func operatorMetrics(src *sources) ([]metricDoc, error) {
	var out []metricDoc
	seen := map[string]bool{}
	for _, r := range recorder.Registrations() {
		if !strings.HasPrefix(r.Package, src.module+"/") {
			continue // controller-runtime's own
		}
		seen[r.Package] = true
		docs, err := describeCollector(src, r)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	registering, err := registeringPackages(src)
	if err != nil {
		return nil, err
	}
	for _, ipath := range registering {
		if !seen[ipath] {
			return nil, fmt.Errorf("%s registers metrics that the reference did not see registered: "+
				"it must be linked into internal/manager and register them from its init", ipath)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("metric %s is described twice", out[i].Name)
		}
	}
	return out, nil
}

// describeCollector lists a collector's descriptors with their type.
func describeCollector(src *sources, r recorder.Registration) ([]metricDoc, error) {
	ch := make(chan *prometheus.Desc)
	go func() {
		r.Collector.Describe(ch)
		close(ch)
	}()
	var out []metricDoc
	var bad error
	for d := range ch {
		m, err := parseDesc(d.String())
		if err != nil {
			bad = err
			continue
		}
		m.Package = r.Package
		out = append(out, m)
	}
	if bad != nil {
		return nil, bad
	}
	typ := collectorType(r.Collector)
	for i := range out {
		out[i].Type = typ
		if typ != "" {
			continue
		}
		t, err := constMetricType(src, r.Package, out[i].Name)
		if err != nil {
			return nil, err
		}
		out[i].Type = t
	}
	return out, nil
}

// descString is what prometheus.Desc's String prints (client_golang 1.2x).
var descString = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"),(?: unit: "(?:[^"\\]|\\.)*",)? ` +
	`constLabels: \{(.*)\}, variableLabels: \{(.*)\}\}$`)

// parseDesc reads a descriptor's name, help and labels from its String: a
// Desc has no getters.
func parseDesc(s string) (metricDoc, error) {
	m := descString.FindStringSubmatch(s)
	if m == nil {
		return metricDoc{}, fmt.Errorf("cannot read the metric descriptor %s (has prometheus.Desc.String changed?)", s)
	}
	name, err := strconv.Unquote(m[1])
	if err != nil {
		return metricDoc{}, fmt.Errorf("descriptor %s: name: %w", s, err)
	}
	help, err := strconv.Unquote(m[2])
	if err != nil {
		return metricDoc{}, fmt.Errorf("descriptor %s: help: %w", s, err)
	}
	var labels []string
	for _, l := range strings.Split(m[4], ",") {
		// c(name): a label with a constraint.
		if l = strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"); l != "" {
			labels = append(labels, l)
		}
	}
	return metricDoc{Name: name, Help: help, Labels: labels}, nil
}

// Metric types, as Prometheus names them.
const (
	typeCounter = "counter"
	typeGauge   = "gauge"
)

// isConstMetric says whether call is prometheus.MustNewConstMetric or
// prometheus.NewConstMetric.
func isConstMetric(call *ast.CallExpr) bool {
	return isCall(call, "prometheus", "MustNewConstMetric") || isCall(call, "prometheus", "NewConstMetric")
}

// collectorType is the type of every metric of a vector or of a single
// metric; "" for a collector of its own (constMetricType reads those).
func collectorType(c prometheus.Collector) string {
	switch c := c.(type) {
	case *prometheus.CounterVec:
		return typeCounter
	case *prometheus.GaugeVec:
		return typeGauge
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	case prometheus.Metric:
		var m dto.Metric
		if c.Write(&m) != nil {
			return ""
		}
		switch {
		case m.Counter != nil:
			return typeCounter
		case m.Gauge != nil:
			return typeGauge
		case m.Histogram != nil:
			return "histogram"
		case m.Summary != nil:
			return "summary"
		}
	}
	return ""
}

// constMetricType reads, in the sources of a collector of its own, the
// type it gives the metric name: the prometheus.NewDesc of that name, and
// the ValueType of the MustNewConstMetric (or NewConstMetric) that uses it.
// Collect says nothing until there is something to report.
func constMetricType(src *sources, ipath, name string) (string, error) {
	p, err := src.byImportPath(ipath)
	if err != nil {
		return "", fmt.Errorf("metric %s: %w", name, err)
	}
	if p == nil {
		return "", fmt.Errorf("metric %s: %s is not a package of the manager's module", name, ipath)
	}
	descVars := map[string]bool{} // the variables holding name's Desc
	for _, f := range p.Files {
		ast.Inspect(f.AST, func(n ast.Node) bool {
			var lhs []*ast.Ident
			var rhs []ast.Expr
			switch n := n.(type) {
			case *ast.ValueSpec:
				lhs, rhs = n.Names, n.Values
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					id, _ := l.(*ast.Ident)
					lhs = append(lhs, id)
				}
				rhs = n.Rhs
			}
			for i := range min(len(lhs), len(rhs)) {
				if call, ok := rhs[i].(*ast.CallExpr); ok && lhs[i] != nil && isCall(call, "prometheus", "NewDesc") && p.stringValue(call.Args[0]) == name {
					descVars[lhs[i].Name] = true
				}
			}
			return true
		})
	}
	types := map[string]string{"GaugeValue": typeGauge, "CounterValue": typeCounter, "UntypedValue": "untyped"}
	found := ""
	for _, f := range p.Files {
		ast.Inspect(f.AST, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 || !isConstMetric(call) {
				return true
			}
			if id, ok := call.Args[0].(*ast.Ident); ok && descVars[id.Name] {
				if sel, ok := call.Args[1].(*ast.SelectorExpr); ok && types[sel.Sel.Name] != "" {
					found = types[sel.Sel.Name]
				}
			}
			return true
		})
	}
	if found == "" {
		return "", fmt.Errorf("metric %s of %s: cannot tell its type (teach hack/release/reference/metrics.go the collector)", name, ipath)
	}
	return found, nil
}

// stringValue is the value of a string literal or of the package's
// string constant; "" otherwise.
func (p *goPackage) stringValue(e ast.Expr) string {
	if s, ok := stringLit(e); ok {
		return s
	}
	if id, ok := e.(*ast.Ident); ok {
		v, _ := p.constValue(id.Name)
		return v
	}
	return ""
}

// registeringPackages are the packages under internal/ and cmd/ whose
// sources call Registry.Register or Registry.MustRegister (controller-
// runtime's metrics.Registry).
func registeringPackages(src *sources) ([]string, error) {
	var out []string
	for _, top := range []string{"internal", "cmd"} {
		dirs, err := src.dirs(top)
		if err != nil {
			return nil, err
		}
		for _, dir := range dirs {
			p, err := src.pkg(dir)
			if err != nil {
				return nil, err
			}
			if registers(p) {
				out = append(out, p.ImportPath)
			}
		}
	}
	return out, nil
}

func registers(p *goPackage) bool {
	found := false
	for _, f := range p.Files {
		ast.Inspect(f.AST, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && (sel.Sel.Name == "MustRegister" || sel.Sel.Name == "Register") &&
				strings.HasSuffix(selectorPath(sel.X), "metrics.Registry") {
				found = true
			}
			return !found
		})
	}
	return found
}
