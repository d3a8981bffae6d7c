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
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaderLeaseName is the manager's leader election Lease (cmd/main.go's
// LeaderElectionID), in the operator's namespace.
const LeaderLeaseName = "vault-keycloak-operator.carbogame.com"

// HoldLeaderLease takes the manager's Lease for holder, for an hour: a
// manager started meanwhile serves the webhooks (every replica does) and
// reconciles nothing, as a standby.
func HoldLeaderLease(ctx context.Context, c client.Client, namespace, holder string) error {
	if err := ReleaseLeaderLease(ctx, c, namespace); err != nil {
		return err
	}
	seconds, now := int32(3600), metav1.NewMicroTime(time.Now())
	return c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaderLeaseName, Namespace: namespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}})
}

// ReleaseLeaderLease deletes the manager's Lease: the next manager to try
// takes it at once.
func ReleaseLeaderLease(ctx context.Context, c client.Client, namespace string) error {
	err := c.Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaderLeaseName, Namespace: namespace}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// LeaderLeaseHolder is who holds the manager's Lease now ("" for nobody).
func LeaderLeaseHolder(ctx context.Context, c client.Client, namespace string) (string, error) {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: LeaderLeaseName}, &lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}
