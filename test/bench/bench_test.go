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

// Package bench measures the operator at the scale platform teams run it
// (1,000 VaultApps and 1,000 KeycloakClientCredentials in 50 namespaces,
// 10,000 unrelated Secrets) against the real API server, Vault and
// Keycloak, with the manager binary run as its own process behind counting
// proxies. Each figure is compared with a limit measured in the same run,
// or is a count, so that a noisy machine does not decide the verdict;
// every missed target fails `make bench`. See docs/benchmarks.md.
package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func BenchmarkFleet(b *testing.B) {
	if b.N > 1 {
		b.Skip("one run is the measurement: run with -benchtime=1x")
	}
	started := time.Now()
	f := newFleet(b)
	defer f.stopManager()
	f.spent.lap("setup")
	r := &report{Date: time.Now().UTC(), Machine: machine(), Raw: map[string]any{}}

	// P1: convergence against the bare-client limit, side by side.
	only := os.Getenv("VKO_BENCH_ONLY")
	if only == "P4" {
		// A quicker loop while working on repairs: the fleet, once, then
		// straight to P2 and P4.
		f.converge(b, defaultWorkers, shape.Size, 1, true)
		f.createCredentials(b)
		f.restartInStep(b)
		p4 := f.repairUnderLoad(b, fleetRun)
		if p4.Median.Ratio() > repairTarget || p4.PolicyMax > refresh+time.Second {
			b.Errorf("P4 missed: p99 by round %s; the median round: %s; slowest policy %s", p4.roundsP99(), p4.Median, p4.PolicyMax)
		}
		return
	}
	if only == "P7" {
		// A quicker loop while working on the credential side.
		p7 := f.convergeCredentials(b, shape.Size, credentialRounds, false)
		f.spent.lap("P7 convergence")
		f.credentialSide(b, r, p7)
		r.write(b)
		return
	}
	if only == "P1" {
		// A quicker loop while working on convergence, with fewer workers
		// reported beside the default (about two minutes more: not in the
		// full run, which CI's time cannot spare).
		for _, w := range []int{1, 2, 4} {
			c := f.converge(b, w, 250, 1, false)
			r.add("P1", fmt.Sprintf("%d VaultApps, %d workers (reported)", c.Objects, c.Workers), true, "—",
				"%.2f× (%s / %s)", c.Ratio(), c.Operator.Round(time.Millisecond), c.Limit.Round(time.Millisecond))
		}
	}
	// Seven pairs, as P7: five gave medians of 1.12×, 1.28× and 1.31× on
	// the same VaultApp code (docs/benchmarks.md).
	p1 := f.converge(b, defaultWorkers, shape.Size, 7, true)
	r.Raw["P1"] = p1
	r.add("P1", fmt.Sprintf("%d VaultApps created at once → all Ready, %d workers (the default): operator / limit", shape.Size, defaultWorkers), p1.Ratio() <= 1.3, "≤ 1.3×",
		"%.2f× (%s / %s; median of %.2f)", p1.Ratio(), p1.Operator.Round(time.Millisecond), p1.Limit.Round(time.Millisecond), p1.Ratios)
	f.spent.lap("P1")
	if only == "P1" {
		r.write(b)
		return
	}

	// P6: conversion, with the fleet of VaultApps in place and the manager
	// at rest (its next refresh is a period away).
	p6 := f.conversionCost(b)
	r.Raw["P6"] = p6
	r.add("P6", "conversion webhook latency per object, p99", p6.WebhookP99 <= 5*time.Millisecond, "≤ 5 ms", "%s (p50 %s)", ms(p6.WebhookP99), ms(p6.WebhookP50))
	r.add("P6", fmt.Sprintf("LIST of %d VaultApps, v1alpha1 / v1beta1 (medians of 7 alternating)", p6.Items), p6.Ratio() <= 2.0, "≤ 2.0×",
		"%.2f× (%s / %s)", p6.Ratio(), p6.ListAlpha.Round(time.Millisecond), p6.ListBeta.Round(time.Millisecond))
	f.spent.lap("P6")

	f.createCredentials(b)
	f.spent.lap("the fleet's credentials")

	// P2: a restart with everything in step, then one refresh period.
	p2 := f.restartInStep(b)
	r.Raw["P2"] = p2
	apiWrites := 0
	for _, n := range p2.APIWrites {
		apiWrites += n
	}
	r.add("P2", "writes in one period after a restart in step: Vault / Keycloak / API server", p2.Vault["write"]+p2.Keycloak["write"]+apiWrites == 0, "0 / 0 / 0",
		"%d / %d / %d", p2.Vault["write"], p2.Keycloak["write"], apiWrites)
	r.add("P2", "external reads per object in that period: Vault per VaultApp / Keycloak per credential", p2.VaultReadsPer <= 2 && p2.KeycloakReadsP <= 2, "≤ 2 / ≤ 2",
		"%.2f / %.2f", p2.VaultReadsPer, p2.KeycloakReadsP)
	// The admin events are read per realm, whatever the fleet's size: the
	// fleet's credentials read one realm.
	eventsAllowed := int(p2.Window/manager.DefaultKeycloakEventsEvery) + 1
	r.add("P2", "Keycloak admin-events reads in that period, for the 1 realm the fleet reads", p2.Keycloak["events"] <= eventsAllowed,
		fmt.Sprintf("≤ 1 per %s (%d)", manager.DefaultKeycloakEventsEvery, eventsAllowed), "%d", p2.Keycloak["events"])
	f.spent.lap("P2")

	// P4: repairs while the refresh wave that follows runs.
	p4 := f.repairUnderLoad(b, fleetRun)
	r.Raw["P4"] = p4
	r.add("P4", fmt.Sprintf("%d edited + %d deleted Secrets restored during a refresh wave, p99: operator / bare repairer in the same burst, median of %d rounds", editedSecrets, deletedSecrets, repairRounds),
		p4.Median.Ratio() <= repairTarget, fmt.Sprintf("≤ %.1f×", repairTarget), "%.2f× (%s / %s; rounds %s)", p4.Median.Ratio(), ms(p4.Median.SecretP99), ms(p4.Median.LimitP99), p4.roundsP99())
	r.explain("every round: " + p4.roundsDetail())
	r.add("P4", fmt.Sprintf("%d policies edited in Vault restored, slowest", editedPolicies), p4.PolicyMax <= refresh+time.Second, fmt.Sprintf("≤ refreshInterval + 1 s (%s)", refresh+time.Second),
		"%s (checked after %s; two checks of a policy %s apart at most)", p4.PolicyMax.Round(100*time.Millisecond), p4.PolicyCheckMax.Round(100*time.Millisecond), p4.PolicyCheckGap.Round(100*time.Millisecond))
	f.spent.lap("P4")

	// P3: logins over the life of the manager started for P2, with a
	// misconfigured Vault policy on the way.
	refused, loginsRefused, recovered := f.misconfiguredPolicy(b)
	p3 := f.loginCounts(b, f.keycloakTokenLifetime(b))
	f.spent.lap("P3")
	p3.Refused, p3.LoginsWhenRefused, p3.RecoveredAfter = refused, loginsRefused, recovered
	r.Raw["P3"] = p3
	r.add("P3", fmt.Sprintf("Keycloak token requests over %s (token lifetime %s)", p3.Lifetime.Round(time.Second), p3.KeycloakTokenTTL), p3.KeycloakTokens <= p3.KeycloakAllowed,
		fmt.Sprintf("≤ 1 per lifetime (%d)", p3.KeycloakAllowed), "%d", p3.KeycloakTokens)
	r.add("P3", fmt.Sprintf("Vault logins over %s (token TTL 1h)", p3.Lifetime.Round(time.Second)), p3.VaultLogins <= p3.VaultAllowed,
		fmt.Sprintf("≤ 1 per server per TTL (%d)", p3.VaultAllowed), "%d", p3.VaultLogins)
	r.add("P3", "Vault logins while a read-only policy refused requests", refused > 0 && loginsRefused == 0, "0 (with requests refused)",
		"%d logins, %d requests refused", loginsRefused, refused)

	// P5: memory of that same manager, which held the fleet through all of it.
	rss, err := f.manager.PeakRSS()
	if err != nil {
		b.Fatal(err)
	}
	r.Raw["P5"] = map[string]int64{"peakRSSBytes": rss}
	r.add("P5", fmt.Sprintf("peak RSS (VmHWM), %d of each kind + %d unrelated Secrets", shape.Size, shape.Unrelated+bareSecrets), rss <= 150<<20, "≤ 150 MiB",
		"%.1f MiB", float64(rss)/(1<<20))
	// The shipped resources must hold that peak: within the request, and
	// at most half the limit (the defaults are sized for ten times this
	// fleet, docs/operating.md).
	request, limit := shippedMemory(b)
	r.add("P5", "peak RSS against the shipped memory request and limit (config/manager, the chart's defaults)",
		rss <= request && 2*rss <= limit, "≤ request, ≤ limit / 2",
		"%.1f MiB; request %.0f MiB, limit %.0f MiB", float64(rss)/(1<<20), float64(request)/(1<<20), float64(limit)/(1<<20))

	// The counts are the proxies'; the operator's own metrics must agree
	// (over the life of P2's manager: before P7 restarts it).
	match, detail := f.crossCheck(b)
	r.add("—", "proxy counts = operator metrics (Vault, Keycloak requests)", match, "equal", "%s", detail)

	// P7: the credential side, last: its runs create and delete thousands
	// of objects, whose aftermath (etcd compactions, watch caches) must not
	// weigh on P2 and P4.
	p7 := f.convergeCredentials(b, shape.Size, credentialRounds, false)
	f.spent.lap("P7 convergence")
	f.credentialSide(b, r, p7)

	// No secret value in what the bench could read of the operator.
	hay, err := harness.Haystacks(context.Background(), f.c, f.manager.MetricsURL)
	if err != nil {
		b.Fatal(err)
	}
	for i, m := range f.all {
		hay[fmt.Sprintf("log of manager %d", i+1)] = m.Log()
	}
	found := harness.FindSecrets(hay, f.secrets)
	r.add("—", fmt.Sprintf("secret values in logs, Events, statuses, metrics (%d values, %d places)", len(f.secrets), len(hay)), len(found) == 0, "none", "%d %v", len(found), found)

	f.spent.lap("the sweep")
	elapsed := time.Since(started)
	r.Raw["elapsedNanos"] = elapsed
	r.Raw["timeSpent"] = f.spent.String()
	// Reported, not a target: an absolute time drifts with the machine
	// (stop 31 failed at 22m1s against 22 min with nothing changed). What
	// it is for, CI's time, is kept by .ci/run's total and
	// docs/development.md's cold-path budget; the breakdown says where to
	// trim.
	r.add("—", "the whole bench (reported; where its time went)", true, "—", "%s (%s)", elapsed.Round(time.Second), f.spent)
	r.write(b)
}
