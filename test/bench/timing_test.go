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
	"fmt"
	"strings"
	"sync"
	"time"
)

// timeSpent is where the bench's own time went: by phase (laps of one
// stopwatch) and by what the bench was doing in them (restarting the
// manager and waiting for rest, measured runs, cleaning up). The bench's
// length is most of what CI's cold path has to spare: this says what to
// trim before anything else is (docs/benchmarks.md).
type timeSpent struct {
	mu      sync.Mutex
	lapFrom time.Time
	laps    []string
	by      map[string]time.Duration
	order   []string
}

func newTimeSpent() *timeSpent {
	return &timeSpent{lapFrom: time.Now(), by: map[string]time.Duration{}}
}

// lap ends the phase named what at now.
func (t *timeSpent) lap(what string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.laps = append(t.laps, fmt.Sprintf("%s %s", what, now.Sub(t.lapFrom).Round(time.Second)))
	t.lapFrom = now
}

// on adds the time from start to now to the activity named what; use as
// `defer f.spent.on("cleanup", time.Now())`.
func (t *timeSpent) on(what string, start time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.by[what]; !seen {
		t.order = append(t.order, what)
	}
	t.by[what] += time.Since(start)
}

func (t *timeSpent) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var in []string
	for _, what := range t.order {
		in = append(in, fmt.Sprintf("%s %s", what, t.by[what].Round(time.Second)))
	}
	return fmt.Sprintf("by phase: %s; in them: %s", strings.Join(t.laps, ", "), strings.Join(in, ", "))
}
