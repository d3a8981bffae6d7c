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

package operator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The controllers' Normal Events are written to the API server at most
// EventsPerSecond, after a burst of EventsBurst. Warning Events, and the
// updates of an Event series, are written at once.
//
// Why: client-go writes each Event at once, from a goroutine of its own.
// When a thousand VaultApps are created together, their thousand "Created"
// Events reach the API server in the same seconds as the status writes
// that make them Ready, and cost it as much CPU as a tenth of the whole
// convergence (make bench, P1). Paced, a change to one object or to a
// hundred has its Events at once; a larger burst is Ready first and its
// Events follow at this pace (the work is the same, done later). Each
// Event keeps the time it was recorded. Warnings are what someone looking
// for a fault reads first: they never wait behind a burst of Normal ones.
const (
	EventsPerSecond = 20
	EventsBurst     = 100
)

// EventsFlushTimeout bounds how long a stopping manager spends writing
// the Normal Events still waiting for their turn.
const EventsFlushTimeout = 10 * time.Second

// pacedSink writes Events through sink, the Normal ones no faster than
// limiter allows until flushing is closed.
type pacedSink struct {
	sink     events.EventSink
	limiter  *rate.Limiter
	flushing chan struct{}
	// writing counts the writes under way, waiting ones included.
	writing atomic.Int64
}

func newPacedSink(sink events.EventSink, limiter *rate.Limiter) *pacedSink {
	return &pacedSink{sink: sink, limiter: limiter, flushing: make(chan struct{})}
}

func (p *pacedSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	p.writing.Add(1)
	defer p.writing.Add(-1)
	if !p.turn(ctx, event) {
		return event, nil
	}
	return p.sink.Create(ctx, event)
}

func (p *pacedSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	p.writing.Add(1)
	defer p.writing.Add(-1)
	if !p.turn(ctx, event) {
		return event, nil
	}
	return p.sink.Update(ctx, event)
}

// Patch counts a repeated Event into its series. Not paced: client-go
// patches series while holding the lock every new Event needs.
func (p *pacedSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	p.writing.Add(1)
	defer p.writing.Add(-1)
	return p.sink.Patch(ctx, old, data)
}

// turn waits for a Normal Event's turn; false when the recording was
// stopped first. Such an Event is dropped without an error: client-go
// would log each one (a thousand lines when a burst is cut short).
func (p *pacedSink) turn(ctx context.Context, event *eventsv1.Event) bool {
	if event.Type == corev1.EventTypeWarning {
		return true
	}
	r := p.limiter.Reserve()
	wait := r.Delay()
	if wait == 0 {
		return true
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-p.flushing:
		r.Cancel()
		return true
	case <-ctx.Done():
		r.Cancel()
		return false
	}
}

// EventRecording is the controllers' Event broadcaster, writing to a
// paced sink.
type EventRecording struct {
	broadcaster events.EventBroadcaster
	sink        *pacedSink
	cancel      context.CancelFunc
	stopOnce    sync.Once
}

// newEventRecording starts recording Events to sink, paced by limiter.
func newEventRecording(sink events.EventSink, limiter *rate.Limiter) (*EventRecording, error) {
	paced := newPacedSink(sink, limiter)
	b := events.NewBroadcaster(paced)
	// Lives until Stop, which is called once the manager has stopped:
	// its controllers record Events until their last reconcile.
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("start recording Events: %w", err)
	}
	return &EventRecording{broadcaster: b, sink: paced, cancel: cancel}, nil
}

// Recorder returns the recorder of one controller.
func (r *EventRecording) Recorder(scheme *runtime.Scheme, controller string) events.EventRecorder {
	return r.broadcaster.NewRecorder(scheme, controller)
}

// Stop writes every Event recorded so far, the waiting ones without
// waiting for their turn, for at most timeout; then it stops recording.
// Call it once the manager has stopped. A nil recording has nothing to do.
func (r *EventRecording) Stop(timeout time.Duration) {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() {
		close(r.sink.flushing)
		// Hands every Event recorded so far to the sink.
		r.broadcaster.Shutdown()
		deadline := time.Now().Add(timeout)
		// client-go starts each write in a goroutine of its own: idle
		// twice in a row, none is left starting.
		for idle := 0; idle < 2 && time.Now().Before(deadline); {
			if r.sink.writing.Load() == 0 {
				idle++
			} else {
				idle = 0
			}
			time.Sleep(20 * time.Millisecond)
		}
		r.cancel()
	})
}

// setupEventRecording starts the controllers' paced Event recording.
func setupEventRecording(mgr ctrl.Manager) (*EventRecording, error) {
	cs, err := eventsv1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("client of the Events API: %w", err)
	}
	return newEventRecording(&events.EventSinkImpl{Interface: cs}, rate.NewLimiter(EventsPerSecond, EventsBurst))
}
