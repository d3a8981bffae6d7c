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

// Package clusterevent records Events about cluster-scoped objects.
package clusterevent

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReportingController names the operator in the Events it writes itself.
const ReportingController = "vault-keycloak-operator"

// ClusterEventNamespace receives the Events about cluster-scoped objects
// (a terminating Namespace). client-go's recorder puts them in default,
// where every tenant may read another team's names and failures; the API
// server accepts such an Event only in default or kube-system, and
// kube-system is the admins'. kubectl describe, which searches every
// namespace for Events about a cluster-scoped object, still shows them.
const ClusterEventNamespace = metav1.NamespaceSystem

// Record writes an Event about a cluster-scoped object into
// ClusterEventNamespace.
func Record(ctx context.Context, c client.Client, regarding client.Object, related client.Object, eventType, reason, action, note string) error {
	namespace := ClusterEventNamespace
	gvk, err := c.GroupVersionKindFor(regarding)
	if err != nil {
		return err
	}
	now := metav1.NowMicro()
	e := &eventsv1.Event{
		// Named as client-go names Events (a generateName ending in "."
		// is refused by events.k8s.io/v1's validation).
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", regarding.GetName(), now.UnixNano()), Namespace: namespace},
		EventTime:           now,
		ReportingController: ReportingController,
		ReportingInstance:   reportingInstance(),
		Action:              action,
		Reason:              reason,
		Type:                eventType,
		Note:                note,
		Regarding: corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: regarding.GetName(),
			UID: regarding.GetUID(), ResourceVersion: regarding.GetResourceVersion()},
	}
	if related != nil {
		rgvk, err := c.GroupVersionKindFor(related)
		if err != nil {
			return err
		}
		e.Related = &corev1.ObjectReference{APIVersion: rgvk.GroupVersion().String(), Kind: rgvk.Kind, Namespace: related.GetNamespace(),
			Name: related.GetName(), UID: related.GetUID()}
	}
	if err := c.Create(ctx, e, client.DisableReadYourWritesConsistency); err != nil {
		return fmt.Errorf("create Event about %s %s in %s: %w", gvk.Kind, regarding.GetName(), namespace, err)
	}
	return nil
}

func reportingInstance() string {
	host, _ := os.Hostname()
	return ReportingController + "-" + host
}
