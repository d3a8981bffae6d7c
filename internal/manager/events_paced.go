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
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/tools/events"
)

// pacedSink writes Events through sink, new ones no faster than limiter
// allows until flushing is closed. Series patches are not paced. The
// turns go round the namespaces with Events waiting, one Event each: a
// burst in one namespace (a thousand VaultApps created together) does not
// hold back the first Events of another.
type pacedSink struct {
	sink     events.EventSink
	limiter  *rate.Limiter
	flushing chan struct{}
	// writing counts the writes under way, waiting ones included.
	writing atomic.Int64
	// flushable is how many waiting Events may still be written once
	// flushing is closed (EventsFlushMax).
	flushable atomic.Int64
	// waitMax is how many Events may wait (EventsWaitMax).
	waitMax int
	// log says when a backlog starts to drop Events.
	log logr.Logger

	mu sync.Mutex
	// waiting holds, by namespace, the Events waiting for their turn;
	// ring the namespaces that have some, in the order their turns come;
	// queued how many Events wait in all.
	waiting map[string][]chan struct{}
	ring    []string
	queued  int
	// dropping is true from a backlog's first dropped Event until no
	// Event waits.
	dropping bool
	// dealing is true while a goroutine hands out the turns.
	dealing bool
}

func newPacedSink(sink events.EventSink, limiter *rate.Limiter, log logr.Logger) *pacedSink {
	p := &pacedSink{sink: sink, limiter: limiter, flushing: make(chan struct{}), waitMax: EventsWaitMax, log: log, waiting: map[string][]chan struct{}{}}
	p.flushable.Store(EventsFlushMax)
	return p
}

func (p *pacedSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	return p.paced(ctx, event, p.sink.Create)
}

func (p *pacedSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	return p.paced(ctx, event, p.sink.Update)
}

// paced writes event with write once its turn has come.
func (p *pacedSink) paced(ctx context.Context, event *eventsv1.Event, write func(context.Context, *eventsv1.Event) (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	p.writing.Add(1)
	defer p.writing.Add(-1)
	if !p.turn(ctx, event.Namespace) {
		return event, nil
	}
	return write(ctx, event)
}

// Patch counts a repeated Event into its series: one small write, once
// per repeat, that client-go makes while holding the lock every new Event
// needs. It does not wait.
func (p *pacedSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	p.writing.Add(1)
	defer p.writing.Add(-1)
	return p.sink.Patch(ctx, old, data)
}

// turn waits for an Event's turn in its namespace; false when the
// recording has stopped or the backlog is full. Such an Event is dropped
// without an error: client-go would log each one (a thousand lines when
// a burst is cut short).
func (p *pacedSink) turn(ctx context.Context, namespace string) bool {
	if ctx.Err() != nil {
		return false
	}
	p.mu.Lock()
	if len(p.ring) == 0 && p.limiter.Allow() {
		// Nothing waits and a turn is free: at once.
		p.mu.Unlock()
		return true
	}
	if p.queued >= p.waitMax && len(p.waiting[namespace]) > 0 {
		if !p.dropping {
			p.dropping = true
			p.log.Info("Normal Events dropped until the backlog is written", "waiting", p.queued, "perSecond", EventsPerSecond)
		}
		p.mu.Unlock()
		droppedEvents.WithLabelValues(dropBacklog).Inc()
		return false
	}
	mine := make(chan struct{})
	if len(p.waiting[namespace]) == 0 {
		p.ring = append(p.ring, namespace)
	}
	p.waiting[namespace] = append(p.waiting[namespace], mine)
	p.queued++
	if !p.dealing {
		p.dealing = true
		go p.deal()
	}
	p.mu.Unlock()
	select {
	case <-mine:
		return true
	case <-p.flushing:
		if ctx.Err() == nil && p.flushable.Add(-1) >= 0 {
			return true
		}
		droppedEvents.WithLabelValues(dropStopping).Inc()
		return false
	case <-ctx.Done():
		droppedEvents.WithLabelValues(dropStopping).Inc()
		return false
	}
}

// deal hands out turns at the limiter's pace, one namespace after the
// other, until no Event waits or the recording flushes.
func (p *pacedSink) deal() {
	for {
		r := p.limiter.Reserve()
		timer := time.NewTimer(r.Delay())
		select {
		case <-timer.C:
		case <-p.flushing:
			timer.Stop()
			r.Cancel()
			return
		}
		p.mu.Lock()
		if len(p.ring) == 0 {
			p.dealing = false
			p.dropping = false
			p.mu.Unlock()
			r.Cancel()
			return
		}
		namespace := p.ring[0]
		p.ring = p.ring[1:]
		queue := p.waiting[namespace]
		close(queue[0])
		p.queued--
		if rest := queue[1:]; len(rest) > 0 {
			p.waiting[namespace] = rest
			p.ring = append(p.ring, namespace)
		} else {
			delete(p.waiting, namespace)
		}
		p.mu.Unlock()
	}
}
