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
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestReferencesFindsTheSecretWhereverThePodReadsIt(t *testing.T) {
	env := func(ref *corev1.SecretKeySelector) corev1.Container {
		return corev1.Container{Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}}}}
	}
	key := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-credentials"}, Key: "clientSecret"}
	for _, tt := range []struct {
		name string
		spec corev1.PodSpec
		want bool
	}{
		{"an env var", corev1.PodSpec{Containers: []corev1.Container{env(key)}}, true},
		{"an init container's env var", corev1.PodSpec{InitContainers: []corev1.Container{env(key)}}, true},
		{"envFrom", corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-credentials"}}}}}}}, true},
		{"a volume", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-credentials"}}}}}, true},
		{"a projected volume", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app-credentials"}}}}}}}}}, true},
		{"another Secret", corev1.PodSpec{Containers: []corev1.Container{env(&corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "other"}})}}, false},
		{"a ConfigMap of the same name", corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-credentials"}}}}}}}, false},
		{"nothing", corev1.PodSpec{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := References(&corev1.PodTemplateSpec{Spec: tt.spec}, "app-credentials"); got != tt.want {
				t.Errorf("References = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStatusIsKubectlRolloutStatus(t *testing.T) {
	meta := metav1.ObjectMeta{Generation: 2}
	for _, tt := range []struct {
		name string
		obj  client.Object
		done bool
		says string
	}{
		{"a Deployment whose restart is not seen yet", &appsv1.Deployment{ObjectMeta: meta, Status: appsv1.DeploymentStatus{ObservedGeneration: 1}}, false, "to see the restart"},
		{"a Deployment half updated", &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1, AvailableReplicas: 2}}, false, "1 of 2 replicas updated"},
		{"a Deployment with an old replica left", &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 2}}, false, "1 old replicas pending termination"},
		{"a Deployment updated, not available", &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1}}, false, "1 of 2 updated replicas available"},
		{"a Deployment past its deadline", &appsv1.Deployment{ObjectMeta: meta, Status: appsv1.DeploymentStatus{ObservedGeneration: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet x has timed out progressing."}}}}, false, "progress deadline"},
		{"a Deployment rolled out", &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}}, true, "2 replicas"},
		{"a StatefulSet on the old revision", &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, ReadyReplicas: 2, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}}, false, "1 of 2 replicas updated"},
		{"a StatefulSet rolled out", &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, ReadyReplicas: 2, UpdatedReplicas: 2, CurrentRevision: "b", UpdateRevision: "b"}}, true, "2 replicas"},
		{"a StatefulSet updated on delete only", &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}}, false, "OnDelete"},
		{"a DaemonSet half updated", &appsv1.DaemonSet{ObjectMeta: meta, Status: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 2, NumberAvailable: 4}}, false, "2 of 4 pods updated"},
		{"a DaemonSet rolled out", &appsv1.DaemonSet{ObjectMeta: meta, Status: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 4}}, true, "4 pods"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			done, says := Status(tt.obj)
			if done != tt.done || !strings.Contains(says, tt.says) {
				t.Errorf("Status = %v, %q; want %v, %q", done, says, tt.done, tt.says)
			}
		})
	}
}

func TestRestartableSaysWhenARestartLeavesOldPods(t *testing.T) {
	for _, tt := range []struct {
		name string
		obj  client.Object
		want bool
	}{
		{"a Deployment", &appsv1.Deployment{}, true},
		{"a StatefulSet rolling", &appsv1.StatefulSet{}, true},
		{"a StatefulSet on delete", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}}, false},
		{"a StatefulSet with a partition", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}}}}, false},
		{"a DaemonSet on delete", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}, false},
	} {
		if got, why := Restartable(tt.obj); got != tt.want || (!got && why == "") {
			t.Errorf("%s: Restartable = %v (%q), want %v", tt.name, got, why, tt.want)
		}
	}
}
