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

package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The user docs mark each shell block a test runs with an HTML comment on
// the line before its fence, invisible once rendered:
//
//	<!-- run -->                 run the block
//	<!-- run then=NAME -->       run it, then the test does NAME (what no
//	                             shell can do here, such as a kubelet's part)
//	<!-- run where=NAME -->      run it only where the setup NAME is made
//	                             (the doc says so in the sentence before):
//	                             a test that makes it runs these blocks, the
//	                             others pass them by
//
// The blocks of one file run in order, as one terminal session would: the
// variables a block sets are there in the next.
var runMarker = regexp.MustCompile(`^<!-- run(?: then=([a-z-]+))?(?: where=([a-z-]+))? -->$`)

// DocBlock is one marked shell block of a user doc.
type DocBlock struct {
	File string // relative to the repository's root
	Line int    // the fence's line, for messages
	Code string
	Then string // what the test does after it ("" for nothing)
	// Where names the setup the block needs beyond the doc's own ("" for
	// none): see runMarker.
	Where string
}

func (b DocBlock) String() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// DocBlocks returns the marked blocks of file (relative to the repository's
// root), in order. A marker not followed by a shell fence is an error: a
// block that silently stops running would prove nothing.
func DocBlocks(file string) ([]DocBlock, error) {
	text, err := os.ReadFile(filepath.Join(RepoRoot(), file))
	if err != nil {
		return nil, err
	}
	var blocks []DocBlock
	lines := strings.Split(string(text), "\n")
	for i := 0; i < len(lines); i++ {
		m := runMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || (lines[i+1] != "```sh" && lines[i+1] != "```bash") {
			return nil, fmt.Errorf("%s:%d: a run marker must stand right before a ```sh block", file, i+1)
		}
		b := DocBlock{File: file, Line: i + 2, Then: m[1], Where: m[2]}
		var code []string
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			code = append(code, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: the block is not closed", b)
		}
		b.Code = strings.Join(code, "\n") + "\n"
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s has no block marked <!-- run -->", file)
	}
	return blocks, nil
}

// DocShell runs doc blocks as a user's terminal would: bash in Dir with
// Env (and nothing of the test's own environment but PATH's system part),
// each block stopping at its first failing command, the variables of one
// block carried to the next.
type DocShell struct {
	Dir string
	Env []string
	// Placeholders are replaced in a block before it runs: what only the
	// user's machine has (a pod's token file) by what stands in for it.
	Placeholders map[string]string
	state        string
}

// NewDocShell makes a shell working in dir; env is what the user would have
// set (KUBECONFIG, VAULT_ADDR, …), bins the directories of the CLIs the doc
// uses, put first on PATH. HOME is a directory of its own (kcadm.sh and
// helm keep their configuration there).
func NewDocShell(dir string, env []string, bins ...string) (*DocShell, error) {
	home := filepath.Join(dir, ".home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	path := strings.Join(append(bins, "/usr/local/bin", "/usr/bin", "/bin"), string(os.PathListSeparator))
	// java for kcadm.sh: the JDK the machine has (JAVA_HOME when set).
	base := []string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8"}
	if j := os.Getenv("JAVA_HOME"); j != "" {
		base = append(base, "JAVA_HOME="+j)
	}
	return &DocShell{Dir: dir, Env: append(base, env...), state: filepath.Join(dir, ".doc-shell-state")}, nil
}

// The variables bash sets itself, which a block must not carry over.
const bashOwnVariables = `BASH*|FUNCNAME|GROUPS|PPID|SHELLOPTS|UID|EUID|PIPESTATUS|_|RANDOM|SRANDOM|LINENO|SECONDS|EPOCH*|HIST*|OPTERR|OPTIND|DIRSTACK|COMP*|IFS|PS*|SHLVL|PWD|OLDPWD|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|TERM|COLUMNS|LINES|MAILCHECK|PATH|HOME`

// Run runs one block within timeout and returns what it printed (stdout and
// stderr, interleaved as a terminal shows them).
func (s *DocShell) Run(ctx context.Context, b DocBlock, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	code := b.Code
	for placeholder, value := range s.Placeholders {
		code = strings.ReplaceAll(code, placeholder, value)
	}
	// The block's own status is the run's: set -e does not stop at a
	// failing "a && b" list at its end, whose status the saving of the
	// variables would otherwise hide.
	script := fmt.Sprintf(`[ -f %[1]q ] && source %[1]q
set -euo pipefail
%[2]s
rc=$?
set +eu
for v in $(compgen -v); do case $v in rc|%[3]s) ;; *) declare -p "$v" ;; esac; done > %[1]q.new 2>/dev/null
mv %[1]q.new %[1]q
exit $rc
`, s.state, code, bashOwnVariables)
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %s: %w", b, timeout, ctx.Err())
	} else if err != nil {
		err = fmt.Errorf("%s: %w", b, err)
	}
	return out.String(), err
}

// Indent prefixes each line of s, for a block's output in a test's log.
func Indent(s, prefix string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		b.WriteString(prefix + sc.Text() + "\n")
	}
	return b.String()
}

// yamlFence is a yaml block of a doc: the manifests the reader applies.
var yamlFence = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")

// DocYAML returns the one yaml block of file (relative to the repository's
// root) that holds every one of marks, for a test that applies what a doc
// shows; none or several is an error: the test would prove another block.
func DocYAML(file string, marks ...string) (string, error) {
	text, err := os.ReadFile(filepath.Join(RepoRoot(), file))
	if err != nil {
		return "", err
	}
	var found []string
	for _, m := range yamlFence.FindAllStringSubmatch(string(text), -1) {
		all := true
		for _, mark := range marks {
			all = all && strings.Contains(m[1], mark)
		}
		if all {
			found = append(found, m[1])
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%s: %d yaml blocks hold %q, want one", file, len(found), marks)
	}
	return found[0], nil
}

// KubectlBin makes the directory dir/.bin holding kubectl (envtest's) and
// its plugin kubectl vko, built from this checkout as make plugin builds
// it, for a DocShell's PATH; the caller may add the other CLIs a doc uses.
func KubectlBin(dir string) (string, error) {
	bin := filepath.Join(dir, ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return "", fmt.Errorf("kubectl for the docs: %w; run 'make test', which fetches it", err)
	}
	if err := os.Symlink(kubectl, filepath.Join(bin, "kubectl")); err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-vko"), "./cmd/kubectl-vko")
	build.Dir = RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kubectl-vko: %w\n%s", err, out)
	}
	return bin, nil
}
