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
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// repair is P4's figures.
type repair struct {
	Secrets   int           `json:"secrets"`
	SecretP50 time.Duration `json:"secretP50Nanos"`
	SecretP99 time.Duration `json:"secretP99Nanos"`
	Policies  int           `json:"policies"`
	PolicyMax time.Duration `json:"policyMaxNanos"`
	// BurstReads is how many refresh reads the operator sent Vault and
	// Keycloak while the repairs were measured: the load they had to pass.
	BurstReads int `json:"burstReads"`
	// Edited and deleted Secrets apart (p50, p99), and where the
	// credential controller's time went meanwhile (its queue, its
	// reconciles, its failed passes): what to look at when P4 misses.
	EditedP50  time.Duration `json:"editedP50Nanos"`
	EditedP99  time.Duration `json:"editedP99Nanos"`
	DeletedP50 time.Duration `json:"deletedP50Nanos"`
	DeletedP99 time.Duration `json:"deletedP99Nanos"`
	Controller queueCost     `json:"controller"`
	// Echo is how long the bench's own edit took to come back through a
	// watch: the part of a repair's time before the manager can know.
	EchoP50 time.Duration `json:"echoP50Nanos"`
	EchoP99 time.Duration `json:"echoP99Nanos"`
	// Window is from the first edit to the last Secret restored; how busy
	// the machine was then (0–1, every core), and each process's CPU time.
	Window      time.Duration            `json:"windowNanos"`
	MachineBusy float64                  `json:"machineBusy"`
	CPU         map[string]time.Duration `json:"cpuNanosByCommand"`
}

// queueCost is one controller's queue and reconcile figures over a window.
type queueCost struct {
	QueueWait  time.Duration `json:"queueWaitMeanNanos"`
	Reconcile  time.Duration `json:"reconcileMeanNanos"`
	Reconciles uint64        `json:"reconciles"`
	Errors     float64       `json:"errors"`
}

const (
	editedSecrets, deletedSecrets, editedPolicies = 100, 100, 100
)

// repairUnderLoad waits for the refresh wave that follows the restart (every
// object is checked again), and while it runs, edits 100 target Secrets,
// deletes 100 others and edits 100 policies in Vault by hand; it measures
// how long each takes to be restored.
func (f *fleet) repairUnderLoad(b *testing.B, run string) repair {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*refresh)
	defer cancel()
	reads := func() int { return f.vaultCounts()["read"] + f.keycloakProxy.Counts()["read"] }
	base := reads()
	for reads() < base+100 {
		if ctx.Err() != nil {
			b.Fatal("no refresh wave after the restart's first period")
		}
		time.Sleep(50 * time.Millisecond)
	}
	admin, err := f.vault.AdminClient()
	if err != nil {
		b.Fatal(err)
	}

	// What the Secrets and policies hold now, in step.
	want := map[client.ObjectKey]map[string][]byte{}
	for i := range editedSecrets + deletedSecrets {
		var s corev1.Secret
		key := client.ObjectKey{Namespace: nsName(i), Name: fmt.Sprintf("fleet-%04d", i)}
		if err := f.c.Get(ctx, key, &s); err != nil {
			b.Fatal(err)
		}
		want[key] = s.Data
	}
	policies := map[string]string{}
	for i := range editedPolicies {
		name := tenancy.PolicyName("", nsName(i), fmt.Sprintf("%s-%04d", run, i))
		text, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil || text == "" {
			b.Fatalf("policy %s: %q, %v", name, text, err)
		}
		policies[name] = text
	}

	wc, err := client.NewWithWatch(f.cluster.Config, client.Options{Scheme: f.cluster.Env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	w, err := wc.Watch(ctx, &corev1.SecretList{}, client.MatchingLabels{secrets.ManagedByLabel: secrets.ManagedByValue})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()

	var mu sync.Mutex
	changedAt := map[string]time.Time{}
	mark := func(key string) {
		mu.Lock()
		changedAt[key] = time.Now()
		mu.Unlock()
	}
	readBurst := reads()
	metricsBefore := f.controllerMetrics(b)
	cpuBefore, busyBefore, windowStart := harness.CPUByCommand(), busyCPU(), time.Now()
	if out := os.Getenv("VKO_BENCH_PROFILE"); out != "" {
		go f.profile(out+".p4", 4*time.Second)
		go f.profileAPIServer(b, out+".p4.kube-apiserver", 4*time.Second)
	}
	go func() {
		keys := slices.SortedFunc(maps.Keys(want), func(a, b client.ObjectKey) int { return cmp.Compare(a.String(), b.String()) })
		_ = parallelErr(len(keys), 16, func(i int) error {
			key := keys[i]
			var s corev1.Secret
			if err := f.c.Get(ctx, key, &s); err != nil {
				return err
			}
			if i < editedSecrets {
				for k := range s.Data {
					s.Data[k] = []byte("edited by hand")
				}
				mark(key.String()) // the clock starts as the edit is sent
				return f.c.Update(ctx, &s)
			}
			mark(key.String())
			return f.c.Delete(ctx, &s)
		})
	}()
	go func() {
		names := slices.Sorted(maps.Keys(policies))
		_ = parallelErr(len(names), 8, func(i int) error {
			mark(names[i])
			return admin.Sys().PutPolicyWithContext(ctx, names[i], policies[names[i]]+"\n# edited by hand\n")
		})
	}()

	// Secrets: restored when the watch shows the data in step again.
	var secretTimes, editedTimes, deletedTimes []time.Duration
	isEdited := map[client.ObjectKey]bool{}
	for i := range editedSecrets {
		isEdited[client.ObjectKey{Namespace: nsName(i), Name: fmt.Sprintf("fleet-%04d", i)}] = true
	}
	restored := map[string]bool{}
	echoed := map[client.ObjectKey]bool{}
	var echoTimes []time.Duration
	for len(restored) < len(want) {
		select {
		case ev := <-w.ResultChan():
			s, ok := ev.Object.(*corev1.Secret)
			if !ok {
				continue
			}
			key := client.ObjectKeyFromObject(s)
			mu.Lock()
			at, changed := changedAt[key.String()]
			mu.Unlock()
			if _, ours := want[key]; ours && changed && !echoed[key] && (ev.Type == watch.Deleted || string(firstValue(s.Data)) == "edited by hand") {
				// The bench's own change, back through a watch: what the
				// manager's watch waits too, before it can repair.
				echoed[key] = true
				echoTimes = append(echoTimes, time.Since(at))
			}
			if ev.Type == watch.Deleted {
				continue
			}
			if data, ours := want[key]; ours && changed && !restored[key.String()] && maps.EqualFunc(data, s.Data, func(a, b []byte) bool { return string(a) == string(b) }) {
				restored[key.String()] = true
				took := time.Since(at)
				secretTimes = append(secretTimes, took)
				if isEdited[key] {
					editedTimes = append(editedTimes, took)
				} else {
					deletedTimes = append(deletedTimes, took)
				}
			}
		case <-ctx.Done():
			b.Fatalf("%d of %d Secrets restored; manager log:\n%s", len(restored), len(want), f.manager.LogTail(20))
		}
	}

	cost := f.controllerMetrics(b).since(metricsBefore)
	window := time.Since(windowStart)
	cpuUsed := harness.Difference(harness.CPUByCommand(), cpuBefore)
	busy := busyCPU() - busyBefore

	// Policies: restored when Vault holds the operator's text again. They
	// wait for their refresh; polling starts a few seconds before it is
	// due, so that the bench's own reads did not load Vault while the
	// Secrets were measured.
	var policyMax time.Duration
	pending := maps.Clone(policies)
	mu.Lock()
	var firstEdit time.Time
	for name := range policies {
		if at, ok := changedAt[name]; ok && (firstEdit.IsZero() || at.Before(firstEdit)) {
			firstEdit = at
		}
	}
	mu.Unlock()
	time.Sleep(time.Until(firstEdit.Add(refresh - 5*time.Second)))
	for len(pending) > 0 {
		for name, text := range pending {
			mu.Lock()
			at, changed := changedAt[name]
			mu.Unlock()
			if !changed {
				continue
			}
			if now, err := admin.Sys().GetPolicyWithContext(ctx, name); err == nil && now == text {
				policyMax = max(policyMax, time.Since(at))
				delete(pending, name)
			}
		}
		if ctx.Err() != nil {
			b.Fatalf("%d of %d policies not restored", len(pending), len(policies))
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, t := range [][]time.Duration{secretTimes, editedTimes, deletedTimes, echoTimes} {
		slices.Sort(t)
	}
	r := repair{
		Secrets: len(secretTimes), SecretP50: secretTimes[len(secretTimes)/2], SecretP99: percentile(secretTimes, 0.99),
		Policies: len(policies), PolicyMax: policyMax, BurstReads: reads() - readBurst,
		EditedP50: editedTimes[len(editedTimes)/2], EditedP99: percentile(editedTimes, 0.99),
		DeletedP50: deletedTimes[len(deletedTimes)/2], DeletedP99: percentile(deletedTimes, 0.99),
		Controller:  cost,
		Window:      window,
		MachineBusy: float64(busy) / float64(window) / float64(runtime.NumCPU()),
		CPU:         cpuUsed,
	}
	if len(echoTimes) > 0 {
		r.EchoP50, r.EchoP99 = echoTimes[len(echoTimes)/2], percentile(echoTimes, 0.99)
	}
	b.Logf("P4 during a refresh wave (%d reads meanwhile): %d Secrets restored, p50 %s, p99 %s; %d policies restored, the last after %s",
		r.BurstReads, r.Secrets, r.SecretP50.Round(time.Millisecond), r.SecretP99.Round(time.Millisecond), r.Policies, r.PolicyMax.Round(time.Millisecond))
	b.Logf("P4 window %s, machine %.0f%% busy; CPU by process: %v", window.Round(time.Millisecond), 100*r.MachineBusy, cpuUsed)
	b.Logf("P4 edited: p50 %s, p99 %s; deleted: p50 %s, p99 %s; the edits' own watch echo: p50 %s, p99 %s; credential controller meanwhile: %d reconciles, mean queue wait %s, mean reconcile %s, %.0f errors",
		ms(r.EditedP50), ms(r.EditedP99), ms(r.DeletedP50), ms(r.DeletedP99), ms(r.EchoP50), ms(r.EchoP99), cost.Reconciles, ms(cost.QueueWait), ms(cost.Reconcile), cost.Errors)
	return r
}

// controllerSample is the credential controller's cumulative figures.
type controllerSample struct {
	waitSum, reconcileSum time.Duration
	waits, reconciles     uint64
	errors                float64
}

func (f *fleet) controllerMetrics(b *testing.B) controllerSample {
	b.Helper()
	m, err := f.manager.Metrics()
	if err != nil {
		b.Fatal(err)
	}
	wait, waits := harness.HistogramMean(m, "workqueue_queue_duration_seconds", map[string]string{"name": "keycloakclientcredential"})
	rec, recs := harness.HistogramMean(m, "controller_runtime_reconcile_time_seconds", map[string]string{"controller": "keycloakclientcredential"})
	return controllerSample{
		waitSum: wait * time.Duration(waits), waits: waits, reconcileSum: rec * time.Duration(recs), reconciles: recs,
		errors: harness.Sum(m, "controller_runtime_reconcile_errors_total", map[string]string{"controller": "keycloakclientcredential"}),
	}
}

// since is what happened between two samples.
func (s controllerSample) since(before controllerSample) queueCost {
	c := queueCost{Reconciles: s.reconciles - before.reconciles, Errors: s.errors - before.errors}
	if n := s.waits - before.waits; n > 0 {
		c.QueueWait = (s.waitSum - before.waitSum) / time.Duration(n)
	}
	if c.Reconciles > 0 {
		c.Reconcile = (s.reconcileSum - before.reconcileSum) / time.Duration(c.Reconciles)
	}
	return c
}

// busyCPU is the machine's busy CPU time so far (0 when it cannot be read:
// the figure is a diagnostic, not a target).
func busyCPU() time.Duration {
	d, _ := harness.BusyCPU()
	return d
}

// firstValue is one of data's values (the bench's edit writes them all).
func firstValue(data map[string][]byte) []byte {
	for _, v := range data {
		return v
	}
	return nil
}

// percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
