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
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The controllers' Normal Events are written to the API server at most
// EventsPerSecond, after a burst of EventsBurst. Warning Events go through
// a broadcaster of their own and are written at once.
//
// Why: client-go writes each Event at once, from a goroutine of its own.
// When a thousand VaultApps are created together, their thousand "Created"
// Events reach the API server in the same seconds as the status writes
// that make them Ready, and cost it as much CPU as a tenth of the whole
// convergence (make bench, P1). Paced, a change to one object or to a
// hundred has its Events at once; a larger burst is Ready first and its
// Events follow at this pace. Each Event keeps the time it was recorded.
// Warnings are what someone looking for a fault reads first: they never
// wait behind a burst of Normal ones (not even behind the lock client-go
// holds while it writes an Event series).
const (
	EventsPerSecond = 20
	EventsBurst     = 100
)

// EventsFlushTimeout bounds how long a stopping manager spends writing the
// Normal Events still waiting for their turn. Short: the pod's
// terminationGracePeriodSeconds (10) also covers the controllers' stop.
const EventsFlushTimeout = 5 * time.Second

// EventsFlushMax is how many of the Normal Events waiting for their turn a
// stopping manager still writes; the others are dropped. Why: written all
// at once, the backlog of a large burst reached the API server as
// thousands of concurrent writes just as the next leader started against
// it, and timed out unwritten.
const EventsFlushMax = EventsBurst

// EventsWaitMax is how many Normal Events may wait for their turn, ten
// minutes of turns. A new Normal Event beyond it is dropped unless its
// namespace has none waiting: a namespace's first Event always gets a
// place. Why: client-go parks each waiting Event in a goroutine of its
// own, and the backlog of a burst of tens of thousands held a third of the
// manager's memory, for Events written half an hour late.
const EventsWaitMax = 10 * 60 * EventsPerSecond

// droppedEvents counts the Normal Events not written: reason backlog
// (EventsWaitMax were waiting), stopping (beyond EventsFlushMax when the
// manager stopped).
var droppedEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vko_events_dropped_total",
	Help: "Normal Events not written, by reason (backlog: too many waiting for their turn; stopping: waiting when the manager stopped).",
}, []string{"reason"})

// The reasons of vko_events_dropped_total.
const (
	dropBacklog  = "backlog"
	dropStopping = "stopping"
)

func init() {
	metrics.Registry.MustRegister(droppedEvents)
}

// EventRecording is the controllers' Event recording: Normal Events
// through a paced broadcaster, Warnings through one of their own.
type EventRecording struct {
	normal, warning events.EventBroadcaster
	paced           *pacedSink
	warnings        *countedSink
	cancel          context.CancelFunc
	stopLogging     []func()
	stopOnce        sync.Once
}

// newEventRecording starts recording Normal Events to sink paced by
// limiter, and Warnings to sink at once; each Event is also logged to log
// (at the operator's debug level, as controller-runtime's own recorder
// does).
func newEventRecording(sink events.EventSink, limiter *rate.Limiter, log logr.Logger) (*EventRecording, error) {
	paced := newPacedSink(sink, limiter, log)
	warnings := &countedSink{EventSink: sink}
	r := &EventRecording{normal: events.NewBroadcaster(paced), warning: events.NewBroadcaster(warnings), paced: paced, warnings: warnings}
	// Lives until Stop, which is called once mgr.Start has returned.
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	for _, b := range []events.EventBroadcaster{r.normal, r.warning} {
		if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
			r.Stop(0)
			return nil, fmt.Errorf("start recording Events: %w", err)
		}
		stop, err := b.StartLogging(log.V(1))
		if err != nil {
			r.Stop(0)
			return nil, fmt.Errorf("start logging Events: %w", err)
		}
		r.stopLogging = append(r.stopLogging, stop)
	}
	return r, nil
}

// Recorder returns the recorder of one controller.
func (r *EventRecording) Recorder(scheme *runtime.Scheme, controller string) events.EventRecorder {
	return byType{normal: r.normal.NewRecorder(scheme, controller), warning: r.warning.NewRecorder(scheme, controller)}
}

// byType hands Warnings to one recorder and every other Event to another.
type byType struct{ normal, warning events.EventRecorder }

func (b byType) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	rec := b.normal
	if eventtype == corev1.EventTypeWarning {
		rec = b.warning
	}
	rec.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// Stop tries to write the Events recorded so far, the waiting ones without
// waiting for their turn (at most EventsFlushMax of them, whichever wake
// first: not the oldest), for at most about timeout; then it stops
// recording, and Events recorded later are dropped. Call it once mgr.Start
// has returned. Best effort, like Events themselves: an Event still inside
// client-go when the time is up is lost. Nil has nothing to stop.
func (r *EventRecording) Stop(timeout time.Duration) {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() {
		close(r.paced.flushing)
		r.normal.Shutdown()
		r.warning.Shutdown()
		deadline := time.Now().Add(timeout)
		// client-go starts each write in a goroutine of its own: idle
		// twice in a row, none is likely left starting.
		for idle := 0; idle < 2 && time.Now().Before(deadline); {
			if r.paced.writing.Load()+r.warnings.writing.Load() == 0 {
				idle++
			} else {
				idle = 0
			}
			time.Sleep(20 * time.Millisecond)
		}
		r.cancel()
		for _, stop := range r.stopLogging {
			stop()
		}
	})
}

// EventPace is how fast Normal Events are written: PerSecond after a
// burst of Burst. The zero value is EventsPerSecond after EventsBurst.
type EventPace struct{ PerSecond, Burst int }

// setupEventRecording starts the controllers' Event recording.
func setupEventRecording(mgr ctrl.Manager, pace EventPace) (*EventRecording, error) {
	cs, err := eventsv1client.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("client of the Events API: %w", err)
	}
	if pace == (EventPace{}) {
		pace = EventPace{EventsPerSecond, EventsBurst}
	}
	return newEventRecording(&events.EventSinkImpl{Interface: cs}, rate.NewLimiter(rate.Limit(pace.PerSecond), pace.Burst), ctrl.Log.WithName("events"))
}
