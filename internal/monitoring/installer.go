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

package monitoring

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultInterval is how often the installer looks again for the
// Prometheus Operator's API while the cluster does not serve it, or after
// a failed write.
const DefaultInterval = 5 * time.Minute

// Installer installs the Desired objects once the manager leads, and keeps
// looking for their API until it is served. It runs once per start: an
// object deleted by hand comes back at the next start (to turn the objects
// off, set --install-monitoring=false and delete them).
type Installer struct {
	// Client reads and writes without a cache: two objects, once.
	Client    client.Client
	Discovery discovery.DiscoveryInterface
	Namespace string
	Interval  time.Duration
	Log       logr.Logger
}

// NeedLeaderElection: only the leader installs.
func (i *Installer) NeedLeaderElection() bool { return true }

// Start installs, then returns; the manager keeps running.
func (i *Installer) Start(ctx context.Context) error {
	interval := i.Interval
	if interval == 0 {
		interval = DefaultInterval
	}
	waiting := false
	for {
		done, err := i.install(ctx)
		switch {
		case err != nil:
			i.Log.Error(err, "monitoring objects not installed; trying again", "in", interval)
		case !done && !waiting:
			i.Log.Info("the cluster does not serve the Prometheus Operator's API: the ServiceMonitor and alert rules wait for it", "api", GroupVersion, "lookingAgainEvery", interval)
			waiting = true
		case done:
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// install observes the owner, the served kinds and the existing objects,
// decides per object, and applies. done is false while a kind is not served.
func (i *Installer) install(ctx context.Context) (done bool, err error) {
	owner, err := i.owner(ctx)
	if err != nil {
		return false, err
	}
	if owner == nil {
		i.Log.Info("no Deployment to own the monitoring objects (the manager does not run from "+DeploymentName+"): not installed", "namespace", i.Namespace)
		return true, nil
	}
	served, err := i.servedKinds()
	if err != nil {
		return false, err
	}
	desired, err := Desired(i.Namespace, *owner)
	if err != nil {
		return false, err
	}
	done = true
	for _, want := range desired {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(want.GroupVersionKind())
		var found *unstructured.Unstructured
		if served[want.GetKind()] {
			err := i.Client.Get(ctx, client.ObjectKeyFromObject(want), existing)
			switch {
			case err == nil:
				found = existing
			case !apierrors.IsNotFound(err):
				return false, fmt.Errorf("read %s %s/%s: %w", want.GetKind(), want.GetNamespace(), want.GetName(), err)
			}
		}
		switch Decide(served[want.GetKind()], found) {
		case WaitForAPI:
			done = false
		case LeaveForeign:
			i.Log.Info("left as is: not written by the operator", "kind", want.GetKind(), "namespace", want.GetNamespace(), "name", want.GetName(),
				"label", ManagedByLabel+"="+found.GetLabels()[ManagedByLabel])
		case Apply:
			if err := i.write(ctx, want, found); err != nil {
				return false, err
			}
		}
	}
	return done, nil
}

// write creates want where there was nothing (an object someone else
// creates meanwhile makes it fail: it is decided on again next time), and
// repairs the operator's own by a forced apply, which holds only if the
// object is still the one read (its resourceVersion).
func (i *Installer) write(ctx context.Context, want, found *unstructured.Unstructured) error {
	what := fmt.Sprintf("%s %s/%s", want.GetKind(), want.GetNamespace(), want.GetName())
	if found == nil {
		if err := i.Client.Create(ctx, want.DeepCopy(), client.FieldOwner(FieldOwner)); err != nil {
			return fmt.Errorf("create %s: %w", what, err)
		}
		i.Log.Info("installed", "kind", want.GetKind(), "namespace", want.GetNamespace(), "name", want.GetName())
		return nil
	}
	applied := want.DeepCopy()
	applied.SetResourceVersion(found.GetResourceVersion())
	if err := i.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	i.Log.Info("repaired", "kind", want.GetKind(), "namespace", want.GetNamespace(), "name", want.GetName())
	return nil
}

// owner is the reference to the operator's Deployment, nil when there is none.
func (i *Installer) owner(ctx context.Context) (*metav1.OwnerReference, error) {
	d := &appsv1.Deployment{}
	err := i.Client.Get(ctx, types.NamespacedName{Namespace: i.Namespace, Name: DeploymentName}, d)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read Deployment %s/%s: %w", i.Namespace, DeploymentName, err)
	}
	// Neither controller nor blockOwnerDeletion: with
	// OwnerReferencesPermissionEnforcement (OpenShift) either would need
	// the right to update the Deployment's finalizers.
	return &metav1.OwnerReference{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment", Name: d.Name, UID: d.UID}, nil
}

// servedKinds are the kinds the cluster serves in GroupVersion.
func (i *Installer) servedKinds() (map[string]bool, error) {
	list, err := i.Discovery.ServerResourcesForGroupVersion(GroupVersion)
	if apierrors.IsNotFound(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", GroupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Kind] = true
	}
	return served, nil
}
