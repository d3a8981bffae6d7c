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
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The manager's flags come from its own --help, run from a build of
// ./cmd. Why not import them: cmd is package main, and moving bindFlags
// into a package of its own would move the manager's option plumbing
// (managerFlags, its environment parsing, its tests) for a document's
// sake. The --help text is what an operator reads anyway, and it holds the
// flags bound outside bindFlags too: zap's logging flags and
// controller-runtime's --kubeconfig. The environment each flag reads is
// taken from bindFlags' source (flagenv.go).

// Help returns the usage text the manager prints for args (["--help"], or
// ["migrate", "--help"]).
type Help func(args ...string) (string, error)

// BuildManager builds the manager of the repository at root into a
// temporary directory; its Help runs it with an empty environment, so that
// the defaults it prints are its own, not the ones the caller's VAULT_ADDR
// or VKO_SHARDS would give. cleanup removes the build.
func BuildManager(root string) (help Help, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "vko-reference-")
	if err != nil {
		return nil, nil, fmt.Errorf("make a directory for the manager: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("build the manager: %w\n%s", err, out)
	}
	help = func(args ...string) (string, error) {
		run := exec.Command(bin, args...)
		run.Env = []string{}
		out, err := run.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("manager %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
	return help, cleanup, nil
}

// flagDoc is one flag as --help prints it.
type flagDoc struct {
	Name, Type, Default, Usage string
}

var (
	// "  -name type" (type absent for a bool), or "  -x\tusage" for a
	// one-letter name.
	flagLine = regexp.MustCompile(`^  -(\S+)(?: (\S+))?(?:\t(.*))?$`)
	// What flag.PrintDefaults appends when the default is not the zero
	// value: (default "text") for a string, (default 2m0s) otherwise.
	defaultSuffix = regexp.MustCompile(`^(.*) \(default ("(?:[^"\\]|\\.)*"|[^"():][^()]*)\)$`)
)

// parseHelp reads the flags in the text flag.PrintDefaults writes: each
// flag's line, then its usage lines indented by four spaces and a tab.
func parseHelp(text string) ([]flagDoc, error) {
	var flags []flagDoc
	var usage []string
	flush := func() {
		if len(flags) == 0 {
			return
		}
		f := &flags[len(flags)-1]
		f.Usage = strings.Join(usage, " ")
		usage = nil
		if m := defaultSuffix.FindStringSubmatch(f.Usage); m != nil {
			f.Usage, f.Default = m[1], m[2]
			if s, err := strconv.Unquote(m[2]); err == nil {
				f.Default = s
			}
		}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "    \t"); ok {
			usage = append(usage, strings.TrimSpace(rest))
			continue
		}
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			continue // "Usage of manager:"
		}
		flush()
		typ := m[2]
		if typ == "" {
			typ = "bool"
		}
		flags = append(flags, flagDoc{Name: m[1], Type: typ})
		if m[3] != "" {
			usage = append(usage, m[3])
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the usage text: %w", err)
	}
	if len(flags) == 0 {
		return nil, fmt.Errorf("no flag in the usage text:\n%s", text)
	}
	return flags, nil
}
