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
	"context"
	"strings"
	"testing"
	"time"
)

// A doc block fails as a terminal shows it failing: at a failing command,
// and at a failing "test … && echo" at its end, which set -e lets pass;
// variables set in one block are there in the next.
func TestDocShellRunsBlocksAsATerminalWould(t *testing.T) {
	shell, err := NewDocShell(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := func(code string) (string, error) {
		return shell.Run(ctx, DocBlock{File: "doctest_test.go", Code: code}, 10*time.Second)
	}
	if _, err := run("GREETING=hello\nfalse\necho not reached"); err == nil {
		t.Error("a block whose command fails passed")
	}
	if _, err := run(`test "a" = "b" && echo same`); err == nil {
		t.Error("a block ending in a failing && list passed")
	}
	if _, err := run("GREETING=hello\n"); err != nil {
		t.Fatal(err)
	}
	if out, err := run(`test "$GREETING" = hello && echo carried`); err != nil || strings.TrimSpace(out) != "carried" {
		t.Errorf("the next block saw %q, %v: the variable was not carried", out, err)
	}
}
