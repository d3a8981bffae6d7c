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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodConsumers stand for the containers of a workload's pods (kwok runs
// none) that read their client secret once, at start, as from an
// environment variable: each pod that becomes Ready reads the Secret's
// "key" and "secret" then, and logs in to Keycloak with them every Every
// until the pod is gone. A rotation that invalidates the previous secret
// before every pod restarted shows in Failures.
type PodConsumers struct {
	Logins, Failures atomic.Int64
	// Pods counts the pods that started (read the Secret).
	Pods atomic.Int64
	// FirstFailure is the first failed login's error, for the test's log.
	FirstFailure atomic.Value

	stop context.CancelFunc
	done sync.WaitGroup
}

// PodConsumerOptions say whose pods consume which Secret.
type PodConsumerOptions struct {
	Reader      client.Reader
	Namespace   string
	Labels      client.MatchingLabels
	Secret      string
	KeycloakURL string
	Realm       string
	Every       time.Duration
}

// StartPodConsumers follows the pods of o.Labels in o.Namespace.
func StartPodConsumers(ctx context.Context, o PodConsumerOptions) *PodConsumers {
	ctx, cancel := context.WithCancel(ctx)
	c := &PodConsumers{stop: cancel}
	running := map[string]context.CancelFunc{}
	c.done.Go(func() {
		defer func() {
			for _, stop := range running {
				stop()
			}
		}()
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := o.Reader.List(ctx, &pods, client.InNamespace(o.Namespace), o.Labels); err == nil {
				c.follow(ctx, o, pods.Items, running)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	return c
}

// follow starts a consumer for each pod newly Ready, and stops those of
// the pods gone or terminating.
func (c *PodConsumers) follow(ctx context.Context, o PodConsumerOptions, pods []corev1.Pod, running map[string]context.CancelFunc) {
	alive := map[string]bool{}
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || !podReady(pod) {
			continue
		}
		alive[pod.Name] = true
		if _, ok := running[pod.Name]; ok {
			continue
		}
		var s corev1.Secret
		if err := o.Reader.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Secret}, &s); err != nil {
			delete(alive, pod.Name) // tried again at the next look
			continue
		}
		podCtx, stop := context.WithCancel(ctx)
		running[pod.Name] = stop
		c.Pods.Add(1)
		clientID, secret := string(s.Data["key"]), string(s.Data["secret"])
		c.done.Go(func() { c.logIn(podCtx, o, clientID, secret) })
	}
	for name, stop := range running {
		if !alive[name] {
			stop()
			delete(running, name)
		}
	}
}

// logIn is one pod's container: the secret it started with, for its life.
func (c *PodConsumers) logIn(ctx context.Context, o PodConsumerOptions, clientID, secret string) {
	gc := gocloak.NewClient(o.KeycloakURL)
	for ctx.Err() == nil {
		c.Logins.Add(1)
		_, err := gc.LoginClient(ctx, clientID, secret, o.Realm)
		if err != nil && ctx.Err() == nil && c.Failures.Add(1) == 1 {
			c.FirstFailure.Store(err.Error())
		}
		select {
		case <-ctx.Done():
		case <-time.After(o.Every):
		}
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Stop ends every pod's consumer and waits for them.
func (c *PodConsumers) Stop() { c.stop(); c.done.Wait() }

// ConsumerDeployment is a Deployment of one pod that takes the client
// secret of Secret secret from an environment variable (PodConsumers stand
// for its container), rolled out one new pod before the old one goes, a
// new pod counting as available only minReady seconds after it is Ready.
func ConsumerDeployment(ns, name, secret string, minReady int32) *appsv1.Deployment {
	const container = "app"
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1), MinReadySeconds: minReady,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: container, Env: []corev1.EnvVar{{Name: "CLIENT_SECRET",
					ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "secret"}}}}}}},
			},
		},
	}
}
