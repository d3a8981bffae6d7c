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
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the clone this file is in (hack/release/reference).
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}()

// Read from the sources with patterns of their own, not with the
// generator's code: what the page must name.
var (
	declaredFlag   = regexp.MustCompile(`fs\.\w+\((?:&[\w.]+, )?"([a-z0-9-]+)"`)
	reasonConstant = regexp.MustCompile(`(?m)^\s*Reason\w*\s*=\s*"(\w+)"`)
	typeConstant   = regexp.MustCompile(`(?m)^\s*Type\w*\s*=\s*"(\w+)"`)
	metadataConst  = regexp.MustCompile(`(?m)^\s*(?:const )?\w+(?:Annotation|Label|Finalizer)\s*=\s*"([^"]+)"`)
	usageEnv       = regexp.MustCompile(`fs\.\w+\(&[\w.]+, "([a-z0-9-]+)",[^\n]*\n?[^\n]*default: ([A-Z][A-Z0-9_]+)`)
)

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// managerFlagNames are the flags cmd/flags.go declares, plus those bound
// outside it that the page must name too.
func managerFlagNames(t *testing.T) []string {
	var names []string
	for _, m := range declaredFlag.FindAllStringSubmatch(read(t, "cmd/flags.go"), -1) {
		names = append(names, m[1])
	}
	if len(names) < 20 {
		t.Fatalf("found only %d flags in cmd/flags.go: the pattern no longer matches", len(names))
	}
	return append(names, "kubeconfig", "zap-log-level", "zap-devel")
}

// fakeHelp prints what flag.PrintDefaults would for the declared flags,
// so that the page is generated without building the manager.
func fakeHelp(t *testing.T) Help {
	names := managerFlagNames(t)
	return func(args ...string) (string, error) {
		if slices.Contains(args, "migrate") {
			names = []string{"storage-migration", "zap-log-level"}
		}
		var b strings.Builder
		b.WriteString("Usage of manager:\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  -%s string\n    \tWhat %s does. (default \"x\")\n", n, n)
		}
		return b.String(), nil
	}
}

// section is the text of the page from heading to the next heading of
// the same level or above.
func section(page, heading string) string {
	level := strings.Count(strings.Fields(heading)[0], "#")
	_, after, ok := strings.Cut(page, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	for l := level; l >= 1; l-- {
		if i := strings.Index(after, "\n"+strings.Repeat("#", l)+" "); i >= 0 {
			after = after[:i]
		}
	}
	return after
}

// assertNames fails for each of names that text lacks as `name`.
func assertNames(t *testing.T, where, text string, names []string, format string) {
	t.Helper()
	for _, n := range names {
		if !strings.Contains(text, fmt.Sprintf(format, n)) {
			t.Errorf("%s: %s is missing", where, fmt.Sprintf(format, n))
		}
	}
}

func submatches(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// The page names every resource and printer column, every flag and the
// environment it reads, every metric, every condition type and reason of
// both groups, and every annotation key of the API packages.
func TestGenerateNamesEverything(t *testing.T) {
	out, err := Generate(Options{Root: repoRoot, Help: fakeHelp(t)})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)

	resources := section(page, "## Resources")
	for kind, alpha := range map[string]bool{"VaultApp": true, "VaultServer": false, "KeycloakClientCredential": true, "KeycloakServer": true} {
		crd := section(resources, "### "+kind)
		if crd == "" {
			t.Errorf("resources: no section for %s", kind)
			continue
		}
		want := []string{"`spec.", "`status.conditions[].reason`", "| Reason | string |", "| Age | date |"}
		if alpha {
			want = append(want, "Also served: `v1alpha1`, converted losslessly")
		}
		for _, w := range want {
			if !strings.Contains(crd, w) {
				t.Errorf("resources: %s lacks %s", kind, w)
			}
		}
	}
	if !strings.Contains(section(resources, "### VaultApp"), "`spec.policy.rules[].capabilities`") {
		t.Error("resources: VaultApp lacks spec.policy.rules[].capabilities")
	}

	flags := section(page, "## Manager flags")
	assertNames(t, "flags", flags, managerFlagNames(t), "`--%s`")
	assertNames(t, "flags", flags, []string{"VAULT_ADDR", "VKO_CLUSTER_NAME", "VKO_SHARDS", "KUBECONFIG", "ENABLE_WEBHOOKS", "VAULT_TOKEN"}, "`%s`")

	metrics := section(page, "## Metrics")
	if !strings.Contains(metrics, "| `vko_outage_held_resources` | gauge | `service` |") {
		t.Errorf("metrics: vko_outage_held_resources is missing, or not a gauge by service:\n%s", metrics)
	}
	src, err := newSources(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	registered, err := operatorMetrics(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(registered) < 10 {
		t.Errorf("only %d metrics registered: %v", len(registered), registered)
	}
	for _, m := range registered {
		assertNames(t, "metrics", metrics, []string{m.Name}, "| `%s` | "+m.Type+" |")
	}

	conditions := section(page, "## Condition types and reasons")
	for _, g := range []struct{ group, file string }{
		{"vault.exemple.com", "api/vault/v1beta1/conditions.go"},
		{"secrets.carbogame.com", "api/secrets/v1beta1/conditions.go"},
	} {
		text := section(conditions, "### "+g.group)
		api := read(t, g.file)
		reasons := submatches(reasonConstant, api)
		if len(reasons) < 10 {
			t.Fatalf("%s: only %d reasons found", g.file, len(reasons))
		}
		assertNames(t, g.group, text, reasons, "| `%s` |")
		assertNames(t, g.group, text, submatches(typeConstant, api), "| `%s` |")
		if !strings.Contains(text, "(troubleshooting.md#") {
			t.Errorf("%s: reasons do not link to their troubleshooting section", g.group)
		}
	}

	events := section(page, "## Event reasons")
	assertNames(t, "events", events, []string{"RotationRequestRefused", "Rotated", "OrphanRemoved", "TargetNotAllowed", "StorageVersionMigrated"}, "| `%s` |")
	assertEvents(t, "events", events)

	keys := section(page, "## Annotations and labels")
	var want []string
	for _, dir := range []string{"api/vault/v1beta1", "api/secrets/v1beta1"} {
		files, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				rel, _ := filepath.Rel(repoRoot, f)
				want = append(want, submatches(metadataConst, read(t, rel))...)
			}
		}
	}
	if len(want) < 5 {
		t.Fatalf("only %d annotation, label or finalizer keys found in api/*/v1beta1", len(want))
	}
	assertNames(t, "annotations", keys, want, "| `%s` |")
}

// The committed page names every flag and reason the code has: a page not
// regenerated after a change fails here (as make verify-generated does).
func TestCommittedPageIsComplete(t *testing.T) {
	page := read(t, "docs/reference.md")
	assertNames(t, "docs/reference.md (run make reference)", section(page, "## Manager flags"), managerFlagNames(t), "`--%s`")
	for _, f := range []string{"api/vault/v1beta1/conditions.go", "api/secrets/v1beta1/conditions.go"} {
		assertNames(t, "docs/reference.md (run make reference)", page, submatches(reasonConstant, read(t, f)), "| `%s` |")
	}
	if !strings.Contains(page, "`vko_outage_held_resources`") {
		t.Error("docs/reference.md (run make reference): vko_outage_held_resources is missing")
	}
	assertEvents(t, "docs/reference.md (run make reference)", section(page, "## Event reasons"))
}

// knownEvents are Events the controllers record, found in their sources
// by hand, most through a value that carries the reason (a report, a
// notice) rather than a constant in the recording call: the reason, the
// kind it is recorded on, and its type where it has only one.
var knownEvents = []struct{ reason, kind, eventType string }{
	{"Created", "VaultApp", "Normal"},                                // decideReport: r.reason = ReasonCreated; writeReport
	{"DriftRepaired", "VaultApp", "Normal"},                          // decideReport
	{"GrantRevoked", "VaultApp", "Warning"},                          // decideReport: refused(…), r.reason = reason
	{"NotOwned", "VaultApp", ""},                                     // bringInStep: failed(ReasonNotOwned, …); finalize
	{"HeldByAnotherCluster", "VaultApp", "Warning"},                  // bringInStep: failed(reason, …)
	{"LegacyConfiguration", "VaultApp", "Warning"},                   // legacy.go
	{"DeleteFailed", "Namespace", "Warning"},                         // tellTerminatingNamespace: clusterevent.Record
	{"VaultUnavailable", "VaultServer", ""},                          // checkNow: serverEvent{reason: connected.reason}
	{"RotationAbandoned", "KeycloakClientCredential", "Warning"},     // notice{…} in credential_rotation.go
	{"RotationDistributed", "KeycloakClientCredential", "Normal"},    // distributed: notice{…}
	{"Connected", "KeycloakServer", "Normal"},                        // keycloakserver_controller.go
	{"Unauthorized", "KeycloakServer", "Warning"},                    // classify(…).reason
	{"StorageVersionMigrated", "CustomResourceDefinition", "Normal"}, // migrator.go
}

// assertEvents fails for each known Event the Event section lacks, and
// when some reason is left computed rather than listed.
func assertEvents(t *testing.T, where, events string) {
	t.Helper()
	rows := map[[2]string]string{} // type by reason and kind
	for _, line := range strings.Split(events, "\n") {
		cells := strings.Split(line, " | ")
		if strings.HasPrefix(line, "| `") && len(cells) == 4 {
			rows[[2]string{strings.Trim(strings.TrimPrefix(cells[0], "| "), "`"), cells[2]}] = cells[1]
		}
	}
	for _, w := range knownEvents {
		got, ok := rows[[2]string{w.reason, w.kind}]
		switch {
		case !ok:
			t.Errorf("%s: no Event %s on %s", where, w.reason, w.kind)
		case w.eventType != "" && got != w.eventType:
			t.Errorf("%s: Event %s on %s is %s, want %s", where, w.reason, w.kind, got, w.eventType)
		}
	}
	if strings.Contains(events, "computed") {
		t.Errorf("%s: some Event reasons are computed, not listed:\n%s", where, events)
	}
}

// Each flag's environment variable is read from bindFlags, and agrees
// with what its usage says ("default: X").
func TestFlagEnvironment(t *testing.T) {
	src, err := newSources(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	byFlag, envOnly, err := flagEnvs(src)
	if err != nil {
		t.Fatal(err)
	}
	said := usageEnv.FindAllStringSubmatch(read(t, "cmd/flags.go"), -1)
	if len(said) < 4 {
		t.Fatalf("found only %d usages naming their variable", len(said))
	}
	for _, m := range said {
		if byFlag[m[1]] != m[2] {
			t.Errorf("--%s: environment %q, its usage says %s", m[1], byFlag[m[1]], m[2])
		}
	}
	for flag, env := range map[string]string{"install-monitoring": "VKO_INSTALL_MONITORING", "shards": "VKO_SHARDS", "vault-address": "VAULT_ADDR"} {
		if byFlag[flag] != env {
			t.Errorf("--%s: environment %q, want %s", flag, byFlag[flag], env)
		}
	}
	var only []string
	for _, e := range envOnly {
		only = append(only, e.Name)
	}
	for _, want := range []string{"ENABLE_WEBHOOKS", "VAULT_TOKEN", "VAULT_NAMESPACE"} {
		if !slices.Contains(only, want) {
			t.Errorf("environment-only variables %v lack %s", only, want)
		}
	}
}

// parseHelp reads what flag.PrintDefaults writes.
func TestParseHelp(t *testing.T) {
	text := "Usage of manager:\n" +
		"  -a\tone letter (default 3)\n" +
		"  -address string\n    \tWhere (default: VAULT_ADDR). (default \"x (y)\")\n" +
		"  -leader\n    \tElect.\n" +
		"  -secure\n    \tServe over HTTPS. (default true)\n" +
		"  -level value\n    \tFirst line\n    \tsecond line\n" +
		"  -wait duration\n    \tHow long. (default 2m0s)\n"
	got, err := parseHelp(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []flagDoc{
		{Name: "a", Type: "bool", Default: "3", Usage: "one letter"},
		{Name: "address", Type: "string", Default: "x (y)", Usage: "Where (default: VAULT_ADDR)."},
		{Name: "leader", Type: "bool", Usage: "Elect."},
		{Name: "secure", Type: "bool", Default: "true", Usage: "Serve over HTTPS."},
		{Name: "level", Type: "value", Usage: "First line second line"},
		{Name: "wait", Type: "duration", Default: "2m0s", Usage: "How long."},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", got, want)
	}
}

// A table cell keeps its code spans and escapes what Markdown would take.
func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"a | b":                     `a \| b`,
		"<mount>/data/\n  <ns>/":    "&lt;mount&gt;/data/ &lt;ns&gt;/",
		"team-a-* and `x|*<y>` too": "team-a-\\* and `x\\|*<y>` too",
	} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
	if got := slug("vault.exemple.com (VaultApp, VaultServer)"); got != "vaultexemplecom-vaultapp-vaultserver" {
		t.Errorf("slug = %q", got)
	}
}
