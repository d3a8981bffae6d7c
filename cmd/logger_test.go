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

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// TestLoggerWritesEveryField: deferred, each field added along the way
// still reaches the line, under its logger's name.
func TestLoggerWritesEveryField(t *testing.T) {
	var out bytes.Buffer
	log := newLogger(&zap.Options{DestWriter: &out})
	log.WithName("vaultapp").WithValues("namespace", "shop").WithValues("name", "api").Info("wrote to Vault", "what", "policy")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", out.String())
	}
	for k, want := range map[string]any{"logger": "vaultapp", "namespace": "shop", "name": "api", "msg": "wrote to Vault", "what": "policy"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v (line %q)", k, line[k], want, out.String())
		}
	}
}

// TestALoggerThatNeverLogsCostsLessThanZaps: a pass's logger that never
// logs allocates less than half of what zap's own does (zap encodes its
// fields at once).
func TestALoggerThatNeverLogsCostsLessThanZaps(t *testing.T) {
	fields := []any{"controller", "vaultapp", "namespace", "shop", "name", "api", "reconcileID", "0f9c"}
	eager := zap.New(zap.UseFlagOptions(&zap.Options{DestWriter: io.Discard}))
	lazy := newLogger(&zap.Options{DestWriter: io.Discard})
	eagerBytes, lazyBytes := bytesPer(func() { _ = eager.WithValues(fields...) }), bytesPer(func() { _ = lazy.WithValues(fields...) })
	if lazyBytes >= eagerBytes/2 {
		t.Errorf("a logger with fields and no line: %d bytes allocated, zap's own %d; want under half", lazyBytes, eagerBytes)
	}
}

// bytesPer is how many bytes one call of fn allocates, on average.
func bytesPer(fn func()) uint64 {
	const runs = 1000
	fn()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}
