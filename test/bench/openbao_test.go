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
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// BenchmarkOpenBao is P1 and P2 of the fleet on an OpenBao dev server the
// bench starts (a fleet of its own: API server, fleet namespaces, the same
// 1,000 VaultApps over two VaultServers). Reported, no target: one P1 pair
// (a pair alone drifts by ±0.2 here), beside the Vault figures of
// BenchmarkFleet in the same make bench; its own table and
// bench-openbao.json.
func BenchmarkOpenBao(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: run with -benchtime=1x")
	}
	started := time.Now()
	f := newFleetOn(b, func(b *testing.B, dir string) (*harness.Vault, error) {
		v, err := harness.StartOpenBao(context.Background(), dir)
		if err == nil {
			b.Cleanup(v.Stop)
		}
		return v, err
	})
	defer f.stopManager()
	f.spent.lap("setup")
	r := &report{Date: time.Now().UTC(), Machine: machine(), Raw: map[string]any{}}
	p1 := f.converge(b, defaultWorkers, shape.Size, 1, true)
	r.Raw["P1"] = p1
	r.add("P1", fmt.Sprintf("OpenBao: %d VaultApps created at once → all Ready, %d workers: operator / limit, one pair (reported)", shape.Size, defaultWorkers), true, "—",
		"%.2f× (%s / %s)", p1.Ratio(), p1.Operator.Round(time.Millisecond), p1.Limit.Round(time.Millisecond))
	f.spent.lap("P1")
	// In step means the servers' counts too (in BenchmarkFleet, P6 and the
	// credentials come between).
	f.waitServersCounted(b, shape.Size)
	p2 := f.restartInStep(b)
	r.Raw["P2"] = p2
	apiWrites := 0
	for _, n := range p2.APIWrites {
		apiWrites += n
	}
	r.add("P2", "OpenBao: writes in one period after a restart in step: OpenBao / API server (reported)", true, "—", "%d / %d", p2.Vault["write"], apiWrites)
	r.add("P2", "OpenBao: reads per VaultApp in that period (reported)", true, "—", "%.2f", p2.VaultReadsPer)
	f.spent.lap("P2")
	r.add("—", "the OpenBao run (reported; where its time went)", true, "—", "%s (%s)", time.Since(started).Round(time.Second), f.spent)
	r.writeAs(b, "openbao")
}
