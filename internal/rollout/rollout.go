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

// Package rollout knows the workloads a rotation restarts (Deployments,
// StatefulSets, DaemonSets): which read a Secret, how to restart one, and
// whether its rollout is done, judged as kubectl rollout status judges it.
// kubectl's own helpers (k8s.io/kubectl/pkg/polymorphichelpers) would bring
// cli-runtime and kubectl's scheme into the manager for some thirty lines
// of rules; these are written from the same rules, and table-tested.
package rollout

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The kinds of workload a rotation restarts.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
)

// Kinds lists them in the order the operator looks for them.
var Kinds = []string{KindDeployment, KindStatefulSet, KindDaemonSet}

// RestartedAtAnnotation is set on a workload's pod template to restart it,
// as kubectl rollout restart sets its own: a new template, so new pods.
const RestartedAtAnnotation = "secrets.carbogame.com/restarted-at"

// New is an empty workload of kind; nil for any other kind.
func New(kind string) client.Object {
	switch kind {
	case KindDeployment:
		return &appsv1.Deployment{}
	case KindStatefulSet:
		return &appsv1.StatefulSet{}
	case KindDaemonSet:
		return &appsv1.DaemonSet{}
	}
	return nil
}

// NewList is an empty list of workloads of kind; nil for any other kind.
func NewList(kind string) client.ObjectList {
	switch kind {
	case KindDeployment:
		return &appsv1.DeploymentList{}
	case KindStatefulSet:
		return &appsv1.StatefulSetList{}
	case KindDaemonSet:
		return &appsv1.DaemonSetList{}
	}
	return nil
}

// Items are the workloads of a list NewList made.
func Items(list client.ObjectList) []client.Object {
	var out []client.Object
	switch l := list.(type) {
	case *appsv1.DeploymentList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1.StatefulSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1.DaemonSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// PodTemplate is the workload's pod template; nil for another kind.
func PodTemplate(obj client.Object) *corev1.PodTemplateSpec {
	switch w := obj.(type) {
	case *appsv1.Deployment:
		return &w.Spec.Template
	case *appsv1.StatefulSet:
		return &w.Spec.Template
	case *appsv1.DaemonSet:
		return &w.Spec.Template
	}
	return nil
}

// References says whether the pod template reads Secret name: from an
// environment variable, all of its keys as environment, a volume or a
// projected volume, in any container.
func References(t *corev1.PodTemplateSpec, name string) bool {
	for _, v := range t.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == name {
			return true
		}
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.Secret != nil && src.Secret.Name == name {
				return true
			}
		}
	}
	containers := append(append([]corev1.Container(nil), t.Spec.InitContainers...), t.Spec.Containers...)
	for _, c := range containers {
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil && from.SecretRef.Name == name {
				return true
			}
		}
		for _, env := range c.Env {
			if env.ValueFrom != nil && env.ValueFrom.SecretKeyRef != nil && env.ValueFrom.SecretKeyRef.Name == name {
				return true
			}
		}
	}
	return false
}
