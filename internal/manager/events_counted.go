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
	"sync/atomic"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/tools/events"
)

// countedSink counts the writes under way through sink, so that a
// stopping manager waits for them (Warnings are written at once).
type countedSink struct {
	events.EventSink
	writing atomic.Int64
}

func (c *countedSink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	c.writing.Add(1)
	defer c.writing.Add(-1)
	return c.EventSink.Create(ctx, event)
}

func (c *countedSink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	c.writing.Add(1)
	defer c.writing.Add(-1)
	return c.EventSink.Update(ctx, event)
}

func (c *countedSink) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	c.writing.Add(1)
	defer c.writing.Add(-1)
	return c.EventSink.Patch(ctx, old, data)
}
