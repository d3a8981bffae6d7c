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

package harness

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Nerzal/gocloak/v13"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Consumer is a workload that logs in to Keycloak with client credentials
// on a period, taking its clientId and secret from a target Secret (keys
// "key" and "secret") as a pod sees a mounted Secret: a change reaches it
// PodDelay after the Secret changed (the kubelet syncs mounted Secrets on
// its own period). A rotation that costs a login shows in Failures.
type Consumer struct {
	Logins, Failures atomic.Int64
	// FirstFailure is the first failed login's error, for the test's log.
	FirstFailure atomic.Value
	// UsedNew says a login succeeded with the secret NewSecret returned.
	UsedNew atomic.Bool

	stop context.CancelFunc
	done sync.WaitGroup
}

// ConsumerOptions say what a Consumer reads and how often it logs in.
type ConsumerOptions struct {
	Reader      client.Reader
	KeycloakURL string
	Realm       string
	Secret      client.ObjectKey
	// PodDelay is how late the pod sees a change of the Secret.
	PodDelay time.Duration
	// Every is the time between two logins.
	Every time.Duration
	// NewSecret returns the secret the consumer should end on, once known
	// ("" before).
	NewSecret func() string
}

// StartConsumer starts a consumer of the Secret as it is now.
func StartConsumer(ctx context.Context, o ConsumerOptions) (*Consumer, error) {
	var first corev1.Secret
	if err := o.Reader.Get(ctx, o.Secret, &first); err != nil {
		return nil, err
	}
	type version struct {
		clientID, secret string
		seen             time.Time
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &Consumer{stop: cancel}
	var mu sync.Mutex
	// The value the pod started with counts as seen long ago.
	versions := []version{{string(first.Data["key"]), string(first.Data["secret"]), time.Now().Add(-o.PodDelay)}}
	c.done.Go(func() { // the kubelet's view: the Secret as read every 500ms
		for ctx.Err() == nil {
			time.Sleep(500 * time.Millisecond)
			var s corev1.Secret
			if err := o.Reader.Get(ctx, o.Secret, &s); err != nil {
				continue
			}
			mu.Lock()
			if last := versions[len(versions)-1]; last.secret != string(s.Data["secret"]) {
				versions = append(versions, version{string(s.Data["key"]), string(s.Data["secret"]), time.Now()})
			}
			mu.Unlock()
		}
	})
	c.done.Go(func() { // the pod: the newest value it has had PodDelay to see
		gc := gocloak.NewClient(o.KeycloakURL)
		for ctx.Err() == nil {
			time.Sleep(o.Every)
			mu.Lock()
			v := versions[0]
			for _, candidate := range versions {
				if time.Since(candidate.seen) >= o.PodDelay {
					v = candidate
				}
			}
			mu.Unlock()
			c.Logins.Add(1)
			_, err := gc.LoginClient(ctx, v.clientID, v.secret, o.Realm)
			switch {
			case err != nil && ctx.Err() == nil:
				if c.Failures.Add(1) == 1 {
					c.FirstFailure.Store(err.Error())
				}
			case err == nil && o.NewSecret != nil && o.NewSecret() != "" && o.NewSecret() == v.secret:
				c.UsedNew.Store(true)
			}
		}
	})
	return c, nil
}

// Stop ends the consumer and waits for it.
func (c *Consumer) Stop() { c.stop(); c.done.Wait() }
