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
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// repair is P4's figures: the Secret repairs of each round, beside the bare
// repairer's in the same round, and the policy repairs (edited once, in the
// first round).
type repair struct {
	// Rounds are the Secret repair rounds, in order. The target is judged
	// on the median round (by the ratio of the operator's p99 to the bare
	// repairer's): one stall of the machine (the kernel's writeback,
	// another tenant of the VM) that lands in one round of a two-second
	// window does not decide it, and a slow operator misses in every
	// round.
	Rounds []secretRound `json:"rounds"`
	Median secretRound   `json:"median"`
	// LimitWrites is how many writes the bare repairer needed for all its
	// rounds' repairs (one per Secret, and a retry per conflict).
	LimitWrites int `json:"limitWrites"`
	Policies    int `json:"policies"`
	// PolicyMax is the slowest policy repair, from the bench's edit to
	// Vault's answer to the operator's write; PolicyCheckMax the slowest
	// from the edit to the operator's read of that policy (its check).
	PolicyMax      time.Duration `json:"policyMaxNanos"`
	PolicyCheckMax time.Duration `json:"policyCheckMaxNanos"`
	// PolicyCheckGap is the longest from a policy's check before the edit
	// to its check after: the refresh interval and what the queue added.
	PolicyCheckGap time.Duration `json:"policyCheckGapNanos"`
	// BurstReads is how many refresh reads the operator sent Vault and
	// Keycloak while the repairs were measured: the load they had to pass.
	BurstReads int `json:"burstReads"`
}

// secretRound is one round of P4: 100 target Secrets edited and 100 deleted
// at once (and as many of the bare repairer's), and how long each took to
// be restored.
type secretRound struct {
	Secrets int `json:"secrets"`
	// Reads are the refresh reads the operator sent Vault and Keycloak
	// during the round: the wave it ran in.
	Reads     int           `json:"refreshReads"`
	SecretP50 time.Duration `json:"secretP50Nanos"`
	SecretP99 time.Duration `json:"secretP99Nanos"`
	// LimitP50 and LimitP99 are the bare repairer's, in the same burst.
	LimitP50 time.Duration `json:"limitP50Nanos"`
	LimitP99 time.Duration `json:"limitP99Nanos"`
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

// Ratio is the operator's p99 over the bare repairer's, in one round.
func (r secretRound) Ratio() float64 { return float64(r.SecretP99) / float64(r.LimitP99) }

// String is the round's breakdown, for the log and a missed target.
func (r secretRound) String() string {
	return fmt.Sprintf("%d Secrets restored with %d refresh reads meanwhile, p50 %s, p99 %s, %.2f× the bare repairer's (p50 %s, p99 %s) (edited: p50 %s, p99 %s; deleted: p50 %s, p99 %s); the edits' own watch echo: p50 %s, p99 %s; "+
		"credential controller: %d reconciles, mean queue wait %s, mean reconcile %s, %.0f errors; window %s, machine %.0f%% busy; CPU by process: %v",
		r.Secrets, r.Reads, ms(r.SecretP50), ms(r.SecretP99), r.Ratio(), ms(r.LimitP50), ms(r.LimitP99), ms(r.EditedP50), ms(r.EditedP99), ms(r.DeletedP50), ms(r.DeletedP99), ms(r.EchoP50), ms(r.EchoP99),
		r.Controller.Reconciles, ms(r.Controller.QueueWait), ms(r.Controller.Reconcile), r.Controller.Errors,
		r.Window.Round(time.Millisecond), 100*r.MachineBusy, r.CPU)
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
	// repairRounds of Secret repairs, one after the other while the
	// refreshes that follow the restart run (a round takes a few seconds),
	// each on 200 of the fleet's 1,000 Secrets: rounds past the fifth take
	// the first rounds' again (edited from a fresh read). Seven since
	// CI54, whose median of five missed at 2.06× (rounds 1.14–2.28×): the
	// API server's stalls land in one round or two, and a median of seven
	// needs four slow rounds to move (docs/benchmarks.md).
	repairRounds = 7
	// secretSets is how many rounds' worth of distinct Secrets there are.
	secretSets = 5
	// repairTarget is P4's bound on the operator's p99 over the bare
	// repairer's: a repair is a watch event, a reconcile, an apply and a
	// status write where the bare client has the event and one write.
	repairTarget = 2.0
)

// repairUnderLoad waits for the refresh wave that follows the restart (every
// object is checked again), and while it runs, edits 100 policies in Vault by
// hand and, in each round, edits 100 target Secrets and deletes 100
// others (and as many of the bare repairer's); it measures how long each
// takes to be restored.
func (f *fleet) repairUnderLoad(b *testing.B, run string) repair {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*refresh)
	defer cancel()
	reads := func() int { return f.vaultCounts()["read"] + f.keycloakProxy.Counts()["read"] }
	fleetPolicies := make([]string, shape.Size)
	for i := range fleetPolicies {
		fleetPolicies[i] = tenancy.PolicyName("", nsName(i), fmt.Sprintf("%s-%04d", run, i))
	}
	policyClock := f.timePolicyRepairs(fleetPolicies)
	defer policyClock.stop()
	base := reads()
	for reads() < base+100 {
		if ctx.Err() != nil {
			b.Fatal("no refresh wave after the restart's first period")
		}
		time.Sleep(50 * time.Millisecond)
	}
	waveStart := time.Now()
	admin, err := f.vault.AdminClient()
	if err != nil {
		b.Fatal(err)
	}
	wc, err := client.NewWithWatch(f.cluster.Config, client.Options{Scheme: f.cluster.Env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	bareCtx, stopBare := context.WithCancel(ctx)
	defer stopBare()
	limit := f.startBareRepairer(bareCtx, b, wc)

	// What the Secrets and policies hold now, in step; the watches start
	// where their lists end, so that nothing a list showed comes again.
	held := map[client.ObjectKey]*corev1.Secret{}
	watchFrom := func(labels client.MatchingLabels) watch.Interface {
		var list corev1.SecretList
		if err := f.c.List(ctx, &list, labels); err != nil {
			b.Fatal(err)
		}
		for i := range list.Items {
			held[client.ObjectKeyFromObject(&list.Items[i])] = &list.Items[i]
		}
		w, err := wc.Watch(ctx, &corev1.SecretList{}, labels, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		if err != nil {
			b.Fatal(err)
		}
		return w
	}
	w := watchFrom(client.MatchingLabels{secrets.ManagedByLabel: secrets.ManagedByValue})
	defer w.Stop()
	bareW := watchFrom(client.MatchingLabels{bareLabel: "true"})
	defer bareW.Stop()
	// The policies edited are the first the wave checks: the design's
	// promise is drift found within one interval of the last check, and a
	// policy not checked since the restart waits for its first refresh,
	// spread over one more interval (docs/design.md). Until 2026-12-03 the
	// bench edited the fleet's first 100 wherever their refresh stood, and
	// one waited 46.7s (CI of stop 35).
	policies := map[string]string{}
	for _, name := range policyClock.checkedSince(ctx, b, waveStart, editedPolicies) {
		text, err := admin.Sys().GetPolicyWithContext(ctx, name)
		if err != nil || text == "" {
			b.Fatalf("policy %s: %q, %v", name, text, err)
		}
		policies[name] = text
	}

	readBurst, writesBefore := reads(), limit.Writes()
	policiesEdited := make(chan struct{})
	var policyEditErr error
	go func() {
		defer close(policiesEdited)
		names := slices.Sorted(maps.Keys(policies))
		policyEditErr = parallelErr(len(names), 8, func(i int) error {
			policyClock.edited(names[i])
			return admin.Sys().PutPolicyWithContext(ctx, names[i], policies[names[i]]+"\n# edited by hand\n")
		})
	}()
	r := repair{Policies: len(policies)}
	perRound := editedSecrets + deletedSecrets
	for round := range repairRounds {
		targets, bares := map[client.ObjectKey]*corev1.Secret{}, map[client.ObjectKey]*corev1.Secret{}
		edited := map[client.ObjectKey]bool{}
		set := round % secretSets
		for i := set * perRound; i < (set+1)*perRound; i++ {
			key, bareKey := client.ObjectKey{Namespace: nsName(i), Name: fmt.Sprintf("fleet-%04d", i)}, bareName(i)
			if held[key] == nil || held[bareKey] == nil {
				b.Fatalf("Secret %s or %s is not there to edit", key, bareKey)
			}
			targets[key], bares[bareKey] = held[key], held[bareKey]
			edited[key] = i-set*perRound < editedSecrets
			edited[bareKey] = edited[key]
		}
		sr := f.repairRound(ctx, b, round+1, w, bareW, newRestoreClock(targets, edited), newRestoreClock(bares, edited), held, reads)
		b.Logf("P4 round %d of %d during a refresh wave: %s", round+1, repairRounds, sr)
		r.Rounds = append(r.Rounds, sr)
	}
	byRatio := slices.SortedFunc(slices.Values(r.Rounds), func(a, b secretRound) int { return cmp.Compare(a.Ratio(), b.Ratio()) })
	r.Median = byRatio[len(byRatio)/2]
	r.LimitWrites = limit.Writes() - writesBefore
	stopBare()

	// Policies: restored when Vault answers the operator's write of the
	// policy (seen by its proxy: the bench does not poll Vault, whose
	// answers would then be late by the polling and loaded by it). They
	// wait for their refresh.
	w.Stop()
	<-policiesEdited
	if policyEditErr != nil { // an unedited policy would count as restored
		b.Fatalf("edit the policies: %v", policyEditErr)
	}
	if r.PolicyMax, r.PolicyCheckMax, r.PolicyCheckGap, err = policyClock.wait(ctx); err != nil {
		b.Fatal(err)
	}
	r.BurstReads = reads() - readBurst
	b.Logf("P4 (%d reads meanwhile): Secrets p99 by round %s, the median round's %s; the bare repairer wrote %d times for %d Secrets; %d policies restored, the last after %s (checked after %s; the longest between a policy's two checks %s)",
		r.BurstReads, r.roundsP99(), ms(r.Median.SecretP99), r.LimitWrites, bareSecrets, r.Policies, r.PolicyMax.Round(time.Millisecond), r.PolicyCheckMax.Round(time.Millisecond), r.PolicyCheckGap.Round(time.Millisecond))
	return r
}

// roundsP99 lists each round's p99 and its ratio to the bare repairer's,
// in order.
func (r repair) roundsP99() string {
	var out []string
	for _, sr := range r.Rounds {
		out = append(out, fmt.Sprintf("%s (%.2f×)", ms(sr.SecretP99), sr.Ratio()))
	}
	return strings.Join(out, ", ")
}

// roundsDetail is every round's breakdown, for a missed target.
func (r repair) roundsDetail() string {
	var out []string
	for i, sr := range r.Rounds {
		out = append(out, fmt.Sprintf("round %d: %s", i+1, sr))
	}
	return strings.Join(out, "; ")
}

// restoreClock times the restores of one side of a round (the operator's
// target Secrets, or the bare repairer's): from the moment the bench sent
// its change to the watch event showing the Secret holding what it held.
type restoreClock struct {
	want      map[client.ObjectKey]map[string][]byte
	edited    map[client.ObjectKey]bool
	changedAt sync.Map // client.ObjectKey → time.Time
	restored  map[client.ObjectKey]bool
	echoed    map[client.ObjectKey]bool

	all, editedTimes, deletedTimes, echoTimes []time.Duration
}

func newRestoreClock(secrets map[client.ObjectKey]*corev1.Secret, edited map[client.ObjectKey]bool) *restoreClock {
	c := &restoreClock{want: map[client.ObjectKey]map[string][]byte{}, edited: edited, restored: map[client.ObjectKey]bool{}, echoed: map[client.ObjectKey]bool{}}
	for key, s := range secrets {
		c.want[key] = maps.Clone(s.Data)
	}
	return c
}

func (c *restoreClock) done() bool { return len(c.restored) == len(c.want) }

// see records what one watch event shows: the bench's own change coming
// back (its echo), or the Secret restored.
func (c *restoreClock) see(ev watch.Event) {
	s, ok := ev.Object.(*corev1.Secret)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(s)
	v, changed := c.changedAt.Load(key)
	data, ours := c.want[key]
	if !ours || !changed {
		return
	}
	at := v.(time.Time)
	if !c.echoed[key] && (ev.Type == watch.Deleted || string(firstValue(s.Data)) == "edited by hand") {
		// The bench's own change, back through a watch: what the
		// repairer's watch waits too, before it can repair.
		c.echoed[key] = true
		c.echoTimes = append(c.echoTimes, time.Since(at))
	}
	if ev.Type == watch.Deleted || c.restored[key] || !c.echoed[key] || !sameData(data, s.Data) {
		return
	}
	c.restored[key] = true
	took := time.Since(at)
	c.all = append(c.all, took)
	if c.edited[key] {
		c.editedTimes = append(c.editedTimes, took)
	} else {
		c.deletedTimes = append(c.deletedTimes, took)
	}
}

// repairRound edits the Secrets marked edited and deletes the others, the
// operator's and the bare repairer's in one burst (one of each in turn),
// and times each until a watch shows it holding what it held. The Secrets
// are as listed (in step since): the bench sends its changes without
// reading them again, so that its own reads do not load the API server the
// repairs are measured on.
func (f *fleet) repairRound(ctx context.Context, b *testing.B, n int, w, bareW watch.Interface, op, bare *restoreClock, held map[client.ObjectKey]*corev1.Secret, reads func() int) secretRound {
	b.Helper()
	readsBefore := reads()
	metricsBefore := f.controllerMetrics(b)
	cpuBefore, busyBefore, windowStart := harness.CPUByCommand(), busyCPU(), time.Now()
	if out := os.Getenv("VKO_BENCH_PROFILE"); out != "" {
		// One file per round: the slow rounds are the ones to read.
		out = fmt.Sprintf("%s.p4.round%d", out, n)
		go f.profile(out, 2*time.Second)
		go f.profileAPIServer(b, out+".kube-apiserver", 2*time.Second)
	}
	byName := func(a, b client.ObjectKey) int { return cmp.Compare(a.String(), b.String()) }
	opKeys, bareKeys := slices.SortedFunc(maps.Keys(op.want), byName), slices.SortedFunc(maps.Keys(bare.want), byName)
	type change struct {
		key   client.ObjectKey
		clock *restoreClock
	}
	var changes []change
	for i := range opKeys {
		changes = append(changes, change{opKeys[i], op}, change{bareKeys[i], bare})
	}
	edits := make(chan error, 1)
	go func() {
		edits <- parallelErr(len(changes), 16, func(i int) error {
			key, clock := changes[i].key, changes[i].clock
			s := held[key].DeepCopy()
			clock.changedAt.Store(key, time.Now()) // the clock starts as the change is sent
			if !clock.edited[key] {
				return f.c.Delete(ctx, s)
			}
			edit := func(s *corev1.Secret) error {
				for k := range s.Data {
					s.Data[k] = []byte("edited by hand")
				}
				return f.c.Update(ctx, s)
			}
			err := edit(s)
			if apierrors.IsConflict(err) { // written since the listing: read it again
				if err = f.c.Get(ctx, key, s); err == nil {
					err = edit(s)
				}
			}
			return err
		})
	}()

	for !op.done() || !bare.done() {
		select {
		case err := <-edits:
			if err != nil {
				b.Fatalf("edit or delete the Secrets: %v", err)
			}
			edits = nil
		case ev, open := <-w.ResultChan():
			if !open || ev.Type == watch.Error {
				b.Fatalf("the bench's watch of the target Secrets ended (%s, %v) with %d of %d restored", ev.Type, ev.Object, len(op.restored), len(op.want))
			}
			op.see(ev)
		case ev, open := <-bareW.ResultChan():
			if !open || ev.Type == watch.Error {
				b.Fatalf("the bench's watch of the bare Secrets ended (%s, %v) with %d of %d restored", ev.Type, ev.Object, len(bare.restored), len(bare.want))
			}
			bare.see(ev)
		case <-ctx.Done():
			b.Fatalf("%d of %d target Secrets and %d of %d bare Secrets restored; manager log:\n%s",
				len(op.restored), len(op.want), len(bare.restored), len(bare.want), f.manager.LogTail(20))
		}
	}

	window := time.Since(windowStart)
	busy := busyCPU() - busyBefore
	for _, t := range [][]time.Duration{op.all, op.editedTimes, op.deletedTimes, op.echoTimes, bare.all} {
		slices.Sort(t)
	}
	return secretRound{
		Secrets: len(op.all), SecretP50: op.all[len(op.all)/2], SecretP99: percentile(op.all, 0.99),
		LimitP50: bare.all[len(bare.all)/2], LimitP99: percentile(bare.all, 0.99),
		EditedP50: op.editedTimes[len(op.editedTimes)/2], EditedP99: percentile(op.editedTimes, 0.99),
		DeletedP50: op.deletedTimes[len(op.deletedTimes)/2], DeletedP99: percentile(op.deletedTimes, 0.99),
		EchoP50: op.echoTimes[len(op.echoTimes)/2], EchoP99: percentile(op.echoTimes, 0.99),
		Controller:  f.controllerMetrics(b).since(metricsBefore),
		Reads:       reads() - readsBefore,
		Window:      window,
		MachineBusy: float64(busy) / float64(window) / float64(runtime.NumCPU()),
		CPU:         harness.Difference(harness.CPUByCommand(), cpuBefore),
	}
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

// policyClock times the policy repairs from what the Vault proxies see of
// the operator: its reads of a policy (its checks) and Vault's answer to its
// write (the repair), the first of each after the bench's edit.
type policyClock struct {
	f  *fleet
	mu sync.Mutex
	// lastCheckAt is each policy's latest check before its edit (it stays
	// put once edited); editedAt, checkedAt and restoredAt are by policy
	// name, from the edit on.
	lastCheckAt, editedAt, checkedAt, restoredAt map[string]time.Time
	names                                        []string
}

// timePolicyRepairs starts timing the named policies' checks and repairs.
func (f *fleet) timePolicyRepairs(names []string) *policyClock {
	c := &policyClock{f: f, lastCheckAt: map[string]time.Time{}, editedAt: map[string]time.Time{}, checkedAt: map[string]time.Time{},
		restoredAt: map[string]time.Time{}}
	tracked := map[string]bool{}
	for _, name := range names {
		tracked[name] = true
	}
	const prefix = "/v1/sys/policies/acl/"
	answer := func(r *http.Request, status int) {
		name, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || status >= 300 || !tracked[name] {
			return
		}
		now := time.Now()
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, edited := c.editedAt[name]; !edited {
			if r.Method == http.MethodGet {
				c.lastCheckAt[name] = now
			}
			return
		}
		at := c.checkedAt
		if r.Method != http.MethodGet {
			at = c.restoredAt
		}
		if _, seen := at[name]; !seen {
			at[name] = now
		}
	}
	for _, p := range []*harness.CountingProxy{f.vaultProxy, f.vaultProxyB} {
		p.OnAnswer(answer)
	}
	return c
}

// checkedSince waits for n policies checked after since and returns them,
// in the order of their checks.
func (c *policyClock) checkedSince(ctx context.Context, b *testing.B, since time.Time, n int) []string {
	b.Helper()
	for {
		c.mu.Lock()
		var names []string
		for name, at := range c.lastCheckAt {
			if at.After(since) {
				names = append(names, name)
			}
		}
		slices.SortFunc(names, func(x, y string) int { return c.lastCheckAt[x].Compare(c.lastCheckAt[y]) })
		c.mu.Unlock()
		if len(names) >= n {
			return names[:n]
		}
		select {
		case <-ctx.Done():
			b.Fatalf("%d policies checked in the refresh wave, want %d", len(names), n)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// edited marks the moment the bench sends its edit of a policy.
func (c *policyClock) edited(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.editedAt[name] = time.Now()
	c.names = append(c.names, name)
}

// wait returns the slowest repair, the slowest check and the longest
// between two checks of a policy, once every edited policy is repaired.
func (c *policyClock) wait(ctx context.Context) (slowest, slowestCheck, longestGap time.Duration, err error) {
	for {
		c.mu.Lock()
		done := len(c.restoredAt) == len(c.names)
		if done {
			for _, name := range c.names {
				slowest = max(slowest, c.restoredAt[name].Sub(c.editedAt[name]))
				if at, ok := c.checkedAt[name]; ok {
					slowestCheck = max(slowestCheck, at.Sub(c.editedAt[name]))
					if prev, ok := c.lastCheckAt[name]; ok {
						longestGap = max(longestGap, at.Sub(prev))
					}
				}
			}
		}
		restored := len(c.restoredAt)
		c.mu.Unlock()
		if done {
			return slowest, slowestCheck, longestGap, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, 0, fmt.Errorf("%d of %d policies restored", restored, len(c.names))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// stop ends the timing.
func (c *policyClock) stop() {
	for _, p := range []*harness.CountingProxy{c.f.vaultProxy, c.f.vaultProxyB} {
		p.OnAnswer(nil)
	}
}
