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

// Package outage holds the resources whose service (Vault, a Keycloak
// server) did not answer, probes the service, and queues them all at once
// when it answers again.
package outage

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// DefaultProbeInterval is how often a service that did not answer is asked
// again.
const DefaultProbeInterval = 2 * time.Second

// Tracker holds the resources whose reconcile failed because a service did
// not answer (Vault, or one Keycloak server), asks that service every
// Interval whether it answers again, and queues all of its resources at
// once when it does.
//
// Why: the backoff of a failed reconcile doubles up to --max-backoff, so
// after a minute-long outage each resource would wait out its own delay
// (up to two minutes) long after the service came back; and a resource
// retrying on its own would send a request per resource to a service that
// is just starting. One probe per service is all an outage costs.
// The backoff stays as the fallback: a resource whose service never
// answers a probe is still retried, and so is one that fails again soon
// after its service answered a probe (the probe and the request disagree:
// a node that answers health but not writes, one client Keycloak fails
// for): such a resource is not held again for RecoveryGrace, so nothing is
// retried every Interval forever.
type Tracker struct {
	// Interval between two probes of a service that is down.
	Interval time.Duration

	mu    sync.Mutex
	down  map[string]*waitingOn
	back  map[string]time.Time // when each service last answered a probe
	ready chan event.TypedGenericEvent[reconcile.Request]
}

const (
	// RecoveryGrace: after its service answered a probe, a resource that
	// fails the same way again backs off instead of waiting.
	RecoveryGrace = 30 * time.Second
	// MaxWait: a service that has not answered for this long is no longer
	// probed (a KeycloakServer deleted or moved meanwhile); its resources
	// back off as they would without a Tracker.
	MaxWait = 10 * time.Minute
	// probeTimeout bounds one probe: a slow answer still counts as one.
	probeTimeout = 5 * time.Second
	// probesAtOnce bounds the probes in flight (one per service down).
	probesAtOnce = 8
)

// waitingOn is one service that did not answer, and who waits for it.
type waitingOn struct {
	probe   func(context.Context) error
	since   time.Time
	waiting map[reconcile.Request]struct{}
}

// New returns an Outage that probes every interval
// (DefaultProbeInterval when zero).
func New(interval time.Duration) *Tracker {
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	return &Tracker{Interval: interval, down: map[string]*waitingOn{}, back: map[string]time.Time{},
		ready: make(chan event.TypedGenericEvent[reconcile.Request])}
}

// Hold records that req failed because service did not answer; probe says
// whether it answers again (the latest probe given for a service is used).
// It reports whether req waits: not when the service answered a probe
// within RecoveryGrace (the resource backs off instead).
func (o *Tracker) Hold(service string, probe func(context.Context) error, req reconcile.Request) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if time.Since(o.back[service]) < RecoveryGrace {
		return false
	}
	w, ok := o.down[service]
	if !ok {
		w = &waitingOn{since: time.Now(), waiting: map[reconcile.Request]struct{}{}}
		o.down[service] = w
	}
	w.probe = probe
	w.waiting[req] = struct{}{}
	return true
}

// Held is how many resources wait for service.
func (o *Tracker) Held(service string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.down[service]; ok {
		return len(w.waiting)
	}
	return 0
}

// Start probes the services that are down until ctx ends (a manager
// Runnable).
func (o *Tracker) Start(ctx context.Context) error {
	running.Store(o, struct{}{})
	defer running.Delete(o)
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			o.probeAll(ctx)
		}
	}
}

// NeedLeaderElection: only the leader reconciles, so only it waits.
func (o *Tracker) NeedLeaderElection() bool { return true }

// probeAll asks each service that is down, at once; the resources of each
// that answers are queued. A service down longer than MaxWait is dropped.
func (o *Tracker) probeAll(ctx context.Context) {
	o.mu.Lock()
	probes := make(map[string]func(context.Context) error, len(o.down))
	for service, w := range o.down {
		if time.Since(w.since) > MaxWait {
			delete(o.down, service)
			continue
		}
		probes[service] = w.probe
	}
	o.mu.Unlock()
	var answered sync.Map
	var wg sync.WaitGroup
	slots := make(chan struct{}, probesAtOnce)
	for service, probe := range probes {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			if probe(probeCtx) == nil {
				answered.Store(service, true)
				probesTotal.WithLabelValues(service, "answered").Inc()
				return
			}
			probesTotal.WithLabelValues(service, "no_answer").Inc()
		})
	}
	wg.Wait()
	answered.Range(func(key, _ any) bool {
		service := key.(string)
		o.mu.Lock()
		w := o.down[service]
		delete(o.down, service)
		o.back[service] = time.Now()
		o.mu.Unlock()
		if w == nil {
			return true
		}
		releasedTotal.WithLabelValues(service).Add(float64(len(w.waiting)))
		for req := range w.waiting {
			select {
			case o.ready <- event.TypedGenericEvent[reconcile.Request]{Object: req}:
			case <-ctx.Done():
				return false
			}
		}
		return true
	})
}

// Source queues the resources of a service that answers again; a
// controller watches it.
func (o *Tracker) Source() source.TypedSource[reconcile.Request] {
	return source.TypedChannel(o.ready, handler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(e.Object)
		},
	})
}
