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

	"golang.org/x/time/rate"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The controllers' Events are written to the API server at most
// EventsPerSecond, after a burst of EventsBurst.
//
// Why: client-go writes each Event at once, from a goroutine of its own.
// When a thousand VaultApps are created together, their thousand "Created"
// Events reach the API server in the same seconds as the status writes
// that make them Ready, and cost it as much CPU as a tenth of the whole
// convergence (make bench, P1). Paced, a change to one object or to a
// hundred has its Events at once; a larger burst is Ready first and its
// Events follow at this pace. Each Event keeps the time it was recorded.
const (
	EventsPerSecond = 20
	EventsBurst     = 100
)

// pacedSink writes Events through sink no faster than limiter allows.
type pacedSink struct {
	sink    events.EventSink
	limiter *rate.Limiter
}

func (p *pacedSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	if !p.turn(ctx) {
		return event, nil
	}
	return p.sink.Create(ctx, event)
}

func (p *pacedSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	if !p.turn(ctx) {
		return event, nil
	}
	return p.sink.Update(ctx, event)
}

func (p *pacedSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if !p.turn(ctx) {
		return old, nil
	}
	return p.sink.Patch(ctx, old, data)
}

// turn waits for the Event's turn; false when the manager stopped first.
// Such an Event is dropped without an error: client-go would log each one
// (a thousand lines when a burst is cut short) and retry none.
func (p *pacedSink) turn(ctx context.Context) bool {
	return p.limiter.Wait(ctx) == nil
}

// eventRecording is the controllers' Event broadcaster: it records to a
// paced sink from NewEventRecording until the manager stops.
type eventRecording struct {
	broadcaster events.EventBroadcaster
	stop        context.CancelFunc
}

// newEventRecording starts recording Events to sink, paced by limiter.
func newEventRecording(sink events.EventSink, limiter *rate.Limiter) (*eventRecording, error) {
	b := events.NewBroadcaster(&pacedSink{sink: sink, limiter: limiter})
	// The context lives as long as the manager (Start ends it): Events
	// recorded before the manager starts, or while it waits for the
	// lease, are written too.
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("start recording Events: %w", err)
	}
	return &eventRecording{broadcaster: b, stop: cancel}, nil
}

// Start waits for the manager to stop, then stops recording; Events still
// waiting for their turn are dropped.
func (r *eventRecording) Start(ctx context.Context) error {
	<-ctx.Done()
	r.broadcaster.Shutdown()
	r.stop()
	return nil
}

// NeedLeaderElection: a standby records nothing, but must stop too.
func (r *eventRecording) NeedLeaderElection() bool { return false }

// setupEventRecording gives the manager its paced Event recording, and
// returns the maker of the controllers' recorders.
func setupEventRecording(mgr ctrl.Manager) (func(controller string) events.EventRecorder, error) {
	cs, err := eventsv1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("client of the Events API: %w", err)
	}
	rec, err := newEventRecording(&events.EventSinkImpl{Interface: cs}, rate.NewLimiter(EventsPerSecond, EventsBurst))
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(rec); err != nil {
		rec.stop()
		return nil, err
	}
	return func(controller string) events.EventRecorder {
		return rec.broadcaster.NewRecorder(mgr.GetScheme(), controller)
	}, nil
}
