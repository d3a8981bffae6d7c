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

package rollout

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Status says whether the workload's rollout is done, as kubectl rollout
// status judges it (every replica updated and available, none of the old
// ones left), and how it stands otherwise.
func Status(obj client.Object) (done bool, message string) {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return deploymentStatus(w)
	case *appsv1.StatefulSet:
		return statefulSetStatus(w)
	case *appsv1.DaemonSet:
		return daemonSetStatus(w)
	}
	return false, fmt.Sprintf("%T is no workload a rotation restarts", obj)
}

func deploymentStatus(d *appsv1.Deployment) (bool, string) {
	if d.Generation > d.Status.ObservedGeneration {
		return false, "waiting for the Deployment's controller to see the restart"
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false, fmt.Sprintf("the rollout exceeded its progress deadline: %s", c.Message)
		}
	}
	want := replicas(d.Spec.Replicas)
	st := d.Status
	switch {
	case st.UpdatedReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, want)
	case st.Replicas > st.UpdatedReplicas:
		return false, fmt.Sprintf("%d old replicas pending termination", st.Replicas-st.UpdatedReplicas)
	case st.AvailableReplicas < st.UpdatedReplicas:
		return false, fmt.Sprintf("%d of %d updated replicas available", st.AvailableReplicas, st.UpdatedReplicas)
	}
	return true, fmt.Sprintf("%d replicas updated and available", st.UpdatedReplicas)
}

func statefulSetStatus(s *appsv1.StatefulSet) (bool, string) {
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return false, "updateStrategy OnDelete: its pods take the new template only when deleted"
	}
	if s.Generation > s.Status.ObservedGeneration {
		return false, "waiting for the StatefulSet's controller to see the restart"
	}
	want := replicas(s.Spec.Replicas)
	st := s.Status
	if st.ReadyReplicas < want {
		return false, fmt.Sprintf("%d of %d replicas ready", st.ReadyReplicas, want)
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
		if st.UpdatedReplicas < want-*ru.Partition {
			return false, fmt.Sprintf("%d of %d replicas above the partition updated", st.UpdatedReplicas, want-*ru.Partition)
		}
		return true, fmt.Sprintf("the %d replicas above the partition updated", want-*ru.Partition)
	}
	if st.UpdateRevision != st.CurrentRevision {
		return false, fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, want)
	}
	return true, fmt.Sprintf("%d replicas updated and ready", want)
}

func daemonSetStatus(d *appsv1.DaemonSet) (bool, string) {
	if d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		return false, "updateStrategy OnDelete: its pods take the new template only when deleted"
	}
	if d.Generation > d.Status.ObservedGeneration {
		return false, "waiting for the DaemonSet's controller to see the restart"
	}
	st := d.Status
	switch {
	case st.UpdatedNumberScheduled < st.DesiredNumberScheduled:
		return false, fmt.Sprintf("%d of %d pods updated", st.UpdatedNumberScheduled, st.DesiredNumberScheduled)
	case st.NumberAvailable < st.DesiredNumberScheduled:
		return false, fmt.Sprintf("%d of %d updated pods available", st.NumberAvailable, st.DesiredNumberScheduled)
	}
	return true, fmt.Sprintf("%d pods updated and available", st.DesiredNumberScheduled)
}

func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// Restartable says whether a restart moves every pod of the workload to a
// new template; why not, otherwise: an OnDelete update strategy keeps the
// old pods until someone deletes them, and a StatefulSet's partition keeps
// those below it.
func Restartable(obj client.Object) (bool, string) {
	switch w := obj.(type) {
	case *appsv1.StatefulSet:
		if w.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			return false, "its updateStrategy is OnDelete: a restart replaces no pod"
		}
		if ru := w.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
			return false, "its rolling update has a partition: the pods below it would keep the previous secret"
		}
	case *appsv1.DaemonSet:
		if w.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
			return false, "its updateStrategy is OnDelete: a restart replaces no pod"
		}
	}
	return true, ""
}
