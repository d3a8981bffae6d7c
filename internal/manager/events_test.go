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

package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// countingSink keeps the Events written to it.
type countingSink struct {
	mu      sync.Mutex
	written []*eventsv1.Event
}

func (s *countingSink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = append(s.written, e)
	return e, nil
}

func (s *countingSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return s.Create(ctx, e)
}

func (s *countingSink) Patch(ctx context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return s.Create(ctx, e)
}

func (s *countingSink) events() []*eventsv1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*eventsv1.Event(nil), s.written...)
}

// waitWritten waits until n Events are written and returns them.
func (s *countingSink) waitWritten(t *testing.T, n int) []*eventsv1.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := s.events()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Events written after 10s, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// record records one Event of type typ about the ConfigMap named name.
func record(rec *EventRecording, typ, name string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: "uid-" + types.UID(name)}}
	rec.Recorder(clientgoscheme.Scheme, "test-controller").Eventf(cm, nil, typ, "Created", "Reconcile", "about %s", name)
}

func TestNormalEventsBeyondTheBurstWaitTheirTurnAndKeepTheirTime(t *testing.T) {
	sink := &countingSink{}
	// A burst of 3, then one a second.
	rec, err := newEventRecording(sink, rate.NewLimiter(rate.Every(time.Second), 3), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop(0)

	recorded := time.Now()
	for i := range 5 {
		record(rec, corev1.EventTypeNormal, fmt.Sprintf("cm-%d", i))
	}
	sink.waitWritten(t, 3)
	time.Sleep(400 * time.Millisecond)
	if got := len(sink.events()); got != 3 {
		t.Fatalf("%d Events written within 0.4s, want the burst of 3 (then one a second)", got)
	}

	written := sink.waitWritten(t, 5)
	if took := time.Since(recorded); took < time.Second {
		t.Fatalf("5 Events written in %s, want one a second after the burst of 3", took)
	}
	for _, e := range written {
		if at := e.EventTime.Time; at.Before(recorded.Add(-time.Second)) || at.After(recorded.Add(500*time.Millisecond)) {
			t.Errorf("Event %q has time %s, recorded at %s: an Event keeps the time it was recorded, not the time of its turn", e.Note, at, recorded)
		}
	}
}

func TestWarningEventsDoNotWaitBehindNormalOnes(t *testing.T) {
	sink := &countingSink{}
	// A burst of 1, then one an hour: only a Warning can pass.
	rec, err := newEventRecording(sink, rate.NewLimiter(rate.Every(time.Hour), 1), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop(0)

	for i := range 3 {
		record(rec, corev1.EventTypeNormal, fmt.Sprintf("normal-%d", i))
	}
	sink.waitWritten(t, 1)
	record(rec, corev1.EventTypeWarning, "warning-0")
	record(rec, corev1.EventTypeWarning, "warning-1")
	sink.waitWritten(t, 3)
	time.Sleep(200 * time.Millisecond)
	written := sink.events()
	var warnings, normals int
	for _, e := range written {
		if e.Type == corev1.EventTypeWarning {
			warnings++
		} else {
			normals++
		}
	}
	if warnings != 2 || normals != 1 {
		t.Fatalf("written: %d Warning and %d Normal Events, want both Warnings at once and the 1 Normal of the burst", warnings, normals)
	}
}

func TestStopWritesTheEventsWaitingForTheirTurn(t *testing.T) {
	sink := &countingSink{}
	rec, err := newEventRecording(sink, rate.NewLimiter(rate.Every(time.Hour), 1), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		record(rec, corev1.EventTypeNormal, fmt.Sprintf("cm-%d", i))
	}
	sink.waitWritten(t, 1)
	// The other three wait for their turn.
	deadline := time.Now().Add(10 * time.Second)
	for rec.paced.writing.Load() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d Events waiting for their turn after 10s, want 3", rec.paced.writing.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	stopped := make(chan struct{})
	go func() { rec.Stop(5 * time.Second); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return within its timeout")
	}
	if got := len(sink.events()); got != 4 {
		t.Fatalf("%d of 4 Events written when Stop returned: a stopping manager writes the ones waiting for their turn", got)
	}
	// Stopped: recording more writes nothing, and Stop again is harmless.
	record(rec, corev1.EventTypeWarning, "late")
	rec.Stop(time.Second)
	time.Sleep(100 * time.Millisecond)
	if got := len(sink.events()); got != 4 {
		t.Fatalf("%d Events written after Stop, want 4", got)
	}
}

// TestStopWritesAtMostTheFlushBudget: a backlog larger than the flush's
// budget is cut to it, not sent at once.
func TestStopWritesAtMostTheFlushBudget(t *testing.T) {
	sink := &countingSink{}
	rec, err := newEventRecording(sink, rate.NewLimiter(rate.Every(time.Hour), 1), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	rec.paced.flushable.Store(2)
	for i := range 6 {
		record(rec, corev1.EventTypeNormal, fmt.Sprintf("cm-%d", i))
	}
	sink.waitWritten(t, 1)
	deadline := time.Now().Add(10 * time.Second)
	for rec.paced.writing.Load() != 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d Events waiting for their turn after 10s, want 5", rec.paced.writing.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec.Stop(5 * time.Second)
	time.Sleep(100 * time.Millisecond)
	if got := len(sink.events()); got != 3 {
		t.Fatalf("%d Events written, want 3: the first at once, then 2 of the 5 waiting (the flush's budget)", got)
	}
}

func TestSeriesPatchesDoNotWaitForATurn(t *testing.T) {
	sink := &countingSink{}
	limiter := rate.NewLimiter(rate.Every(time.Hour), 1)
	limiter.Allow() // the burst is spent
	paced := newPacedSink(sink, limiter, logr.Discard())
	done := make(chan struct{})
	go func() {
		_, _ = paced.Patch(context.Background(), &eventsv1.Event{Note: "again"}, []byte("{}"))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a series patch waited for a turn: client-go holds the lock every new Event needs while it patches")
	}
}

// stuckSink never answers until its context ends, as an API server that
// is gone.
type stuckSink struct{ countingSink }

func (s *stuckSink) Create(ctx context.Context, _ *eventsv1.Event) (*eventsv1.Event, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestStopIsBoundedWhenTheAPIServerDoesNotAnswer(t *testing.T) {
	rec, err := newEventRecording(&stuckSink{}, rate.NewLimiter(EventsPerSecond, EventsBurst), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	record(rec, corev1.EventTypeNormal, "cm-0")
	deadline := time.Now().Add(10 * time.Second)
	for rec.paced.writing.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the Event never reached the sink")
		}
		time.Sleep(10 * time.Millisecond)
	}
	started := time.Now()
	rec.Stop(300 * time.Millisecond)
	if took := time.Since(started); took > 2*time.Second {
		t.Fatalf("Stop(300ms) took %s with a write that never ends", took)
	}
}

// logLines is a logger at verbosity and what it has written so far.
func logLines(verbosity int) (logr.Logger, func() string) {
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{Verbosity: verbosity})
	return log, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
}

func TestEventsAreLoggedAtDebugLevel(t *testing.T) {
	log, logged := logLines(1)
	sink := &countingSink{}
	rec, err := newEventRecording(sink, rate.NewLimiter(EventsPerSecond, EventsBurst), log)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop(0)
	record(rec, corev1.EventTypeNormal, "normal-0")
	record(rec, corev1.EventTypeWarning, "warning-0")
	sink.waitWritten(t, 2)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := logged()
		if strings.Contains(got, "about normal-0") && strings.Contains(got, "about warning-0") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("both Events not logged within 5s at debug level; logged:\n%s", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A burst of Events in one namespace does not hold back another
// namespace's first Event: the turns go round the namespaces.
func TestOneNamespacesBurstDoesNotDelayAnothersEvents(t *testing.T) {
	sink := &countingSink{}
	limiter := rate.NewLimiter(rate.Every(20*time.Millisecond), 1)
	paced := newPacedSink(sink, limiter, logr.Discard())
	defer close(paced.flushing)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			_, _ = paced.Create(context.Background(), &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "busy", Name: fmt.Sprint(i)}})
		})
	}
	sink.waitWritten(t, 3) // the busy namespace's burst is under way
	wg.Go(func() {
		_, _ = paced.Create(context.Background(), &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "quiet", Name: "first"}})
	})
	got := sink.waitWritten(t, 41)
	wg.Wait()
	quiet := -1
	for i, e := range got {
		if e.Namespace == "quiet" {
			quiet = i
		}
	}
	// Written within a turn or two of being recorded, not after the 37
	// busy ones still waiting (about 0.75 s at this pace).
	if quiet < 0 || quiet > 6 {
		t.Fatalf("the quiet namespace's Event was written %dth of %d", quiet+1, len(got))
	}
}

// A backlog holds at most waitMax Events: a new one beyond it is dropped,
// counted and said once in the log, unless its namespace has none waiting.
func TestABacklogBeyondTheMaxDropsNewEventsButNotANamespacesFirst(t *testing.T) {
	sink := &countingSink{}
	limiter := rate.NewLimiter(rate.Every(time.Hour), 1)
	limiter.Allow() // the burst is spent: every Event waits
	log, logged := logLines(0)
	paced := newPacedSink(sink, limiter, log)
	paced.waitMax = 3
	dropped := testutil.ToFloat64(droppedEvents.WithLabelValues(dropBacklog))

	results := make(chan bool, 10)
	create := func(namespace, name string) {
		go func() {
			_, err := paced.Create(context.Background(), &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
			results <- err == nil
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("after 10s: %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	queued := func() int { paced.mu.Lock(); defer paced.mu.Unlock(); return paced.queued }
	for i := range 3 {
		create("busy", fmt.Sprint(i))
	}
	waitFor("3 Events waiting", func() bool { return queued() == 3 })
	for i := range 4 {
		create("busy", fmt.Sprint(3+i))
	}
	// The 4 beyond the max return at once, written by nobody.
	for range 4 {
		select {
		case <-results:
		case <-time.After(10 * time.Second):
			t.Fatal("an Event beyond the backlog's max waited")
		}
	}
	if got := testutil.ToFloat64(droppedEvents.WithLabelValues(dropBacklog)) - dropped; got != 4 {
		t.Fatalf("vko_events_dropped_total{reason=backlog} grew by %v, want 4", got)
	}
	// Another namespace's first Event still gets its place.
	create("quiet", "first")
	waitFor("the quiet namespace's first Event waiting", func() bool { return queued() == 4 })

	said := logged()
	if n := strings.Count(said, "Normal Events dropped"); n != 1 {
		t.Fatalf("the drop said %d times in the log, want once per backlog:\n%s", n, said)
	}

	close(paced.flushing) // the 4 waiting are written (within the flush budget)
	for range 4 {
		<-results
	}
	written := sink.events()
	if len(written) != 4 || !slices.ContainsFunc(written, func(e *eventsv1.Event) bool { return e.Namespace == "quiet" }) {
		t.Fatalf("written %d Events, want the 3 busy ones that waited and the quiet one", len(written))
	}
}

// heldSink says when a write starts, and answers it when released, as a
// busy API server.
type heldSink struct {
	countingSink
	started, release chan struct{}
}

func (s *heldSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.started <- struct{}{}
	<-s.release
	return s.countingSink.Create(ctx, e)
}

// A Warning being written when the manager stops is waited for, as the
// Normal ones are.
func TestStopWaitsForAWarningBeingWritten(t *testing.T) {
	sink := &heldSink{started: make(chan struct{}, 1), release: make(chan struct{})}
	rec, err := newEventRecording(sink, rate.NewLimiter(EventsPerSecond, EventsBurst), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	record(rec, corev1.EventTypeWarning, "warning-0")
	select {
	case <-sink.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the Warning never reached the sink")
	}
	stopped := make(chan struct{})
	go func() { rec.Stop(10 * time.Second); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a Warning was being written")
	case <-time.After(300 * time.Millisecond):
	}
	close(sink.release)
	<-stopped
	if got := len(sink.events()); got != 1 {
		t.Fatalf("%d Events written when Stop returned, want the Warning that was being written", got)
	}
}
