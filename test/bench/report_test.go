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

package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// row is one line of the table: a figure and its target.
type row struct {
	ID     string `json:"id"`
	What   string `json:"what"`
	Value  string `json:"value"`
	Target string `json:"target"`
	Pass   bool   `json:"pass"`
	// Detail is the breakdown a missed target is reported with: CI shows
	// the failure's lines, not always the log before them.
	Detail string `json:"detail,omitempty"`
}

// report is what `make bench` prints and writes as JSON.
type report struct {
	Date    time.Time      `json:"date"`
	Machine string         `json:"machine"`
	Rows    []row          `json:"rows"`
	Raw     map[string]any `json:"raw"`
}

func (r *report) add(id, what string, pass bool, target, format string, a ...any) {
	r.Rows = append(r.Rows, row{ID: id, What: what, Value: fmt.Sprintf(format, a...), Target: target, Pass: pass})
}

// explain sets the breakdown of the row added last.
func (r *report) explain(detail string) {
	r.Rows[len(r.Rows)-1].Detail = detail
}

// table renders the rows as the Markdown table the README quotes.
func (r *report) table() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Measured %s on %s.\n\n", r.Date.Format("2006-01-02"), r.Machine)
	sb.WriteString("| id | what | measured | target | |\n|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		verdict := "ok"
		if !row.Pass {
			verdict = "**missed**"
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s |\n", row.ID, row.What, row.Value, row.Target, verdict)
	}
	return sb.String()
}

// write prints the table and writes the JSON (VKO_BENCH_OUT, or
// bin/bench.json in the clone); it fails the benchmark for every missed
// target.
func (r *report) write(b *testing.B) {
	r.writeAs(b, "")
}

// writeAs writes the report as write does, to a file named for suffix
// beside VKO_BENCH_OUT (bench-openbao.json for "openbao").
func (r *report) writeAs(b *testing.B, suffix string) {
	fmt.Println()
	fmt.Println(r.table())
	out := os.Getenv("VKO_BENCH_OUT")
	if out == "" {
		out = filepath.Join(harness.RepoRoot(), "bin", "bench.json")
	}
	if suffix != "" {
		out = strings.TrimSuffix(out, ".json") + "-" + suffix + ".json"
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("bench: results written to %s\n", out)
	for _, row := range r.Rows {
		if !row.Pass {
			b.Errorf("%s missed its target: %s is %s, want %s. %s", row.ID, row.What, row.Value, row.Target, row.Detail)
		}
	}
}

// machine names the CPU and core count the figures were taken on.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if name, ok := strings.CutPrefix(s.Text(), "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
		_ = f.Close()
	}
	return fmt.Sprintf("%d cores (%s), %s/%s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH)
}

func ms(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
