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
	"strings"
	"testing"
)

// The sweep finds a value planted in any kept place — short or long, at
// either end of a text — names where, and never prints the value; with
// nothing planted it finds nothing; with nothing kept it refuses to pass.
func TestSweepFindsAPlantedSecret(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvSweepDir, dir)
	if _, err := Sweep(dir); err == nil {
		t.Fatal("a sweep of nothing passed")
	}
	KeepSecret("client-secret-0123456789abcdef", "tok\nen-with-a-newline-inside", "pw1", "")
	KeepHaystack("log manager-01", strings.Repeat(`{"level":"info","msg":"synced"}`+"\n", 1000))
	KeepHaystack("every VaultAppList", `{"status":{"conditions":[]}}`)
	r, err := Sweep(dir)
	if err != nil || len(r.Found) != 0 || r.Secrets != 3 || r.Places != 2 {
		t.Fatalf("clean run: %+v, %v", r, err)
	}

	KeepHaystack("event team/x", "wrote client-secret-0123456789abcdef into the Secret")
	KeepHaystack("metrics http://m", "pw1")
	KeepHaystack("log manager-02", "prefix tok\nen-with-a-newline-inside")
	r, err = Sweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Found) != 3 {
		t.Fatalf("found %v, want the three planted values", r.Found)
	}
	for _, f := range r.Found {
		for _, v := range []string{"client-secret-0123", "pw1 ", "newline-inside"} {
			if strings.Contains(f, v) {
				t.Fatalf("the report shows a value: %s", f)
			}
		}
	}
	for _, where := range []string{"event team/x", "metrics http://m", "log manager-02"} {
		if !strings.Contains(strings.Join(r.Found, "\n"), where) {
			t.Fatalf("%s is not named in %v", where, r.Found)
		}
	}
}
