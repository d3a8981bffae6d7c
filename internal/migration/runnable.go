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

package migration

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// OnStart runs the migration of CRDs once the manager is the leader, and
// retries with backoff until it succeeds: right after an upgrade the API
// server may not reach the new conversion webhook yet.
type OnStart struct {
	Migrator *Migrator
	CRDs     []string
}

// NeedLeaderElection: only the leader migrates.
func (o *OnStart) NeedLeaderElection() bool { return true }

// Start migrates, then returns; the manager keeps running.
func (o *OnStart) Start(ctx context.Context) error {
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 12, Cap: 5 * time.Minute}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		_, err := o.Migrator.Migrate(ctx, o.CRDs...)
		return err == nil, nil
	})
	return nil
}
