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

package secrets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// A rotation's consumers: the workloads that read the target Secret once.
// In the grace period the operator restarts them (the first pass there),
// then follows their rollouts (every pass, reading the workloads from the
// API server: the cache holds none), and the previous secret is
// invalidated once every one rolled out or the rollout timeout ran out
// (decideRotation). Only a workload of a target namespace that accepts the
// Secret, whose Secret there is the operator's, and whose pod template
// reads it is ever touched. The states live in status.rotation.consumers,
// written by the pass's status update.

// consumerPoll is how often a rotation waiting for its consumers looks at
// their rollouts.
const consumerPoll = 5 * time.Second

// tendConsumers restarts the consumers of a rotation that just entered its
// grace period, and follows their rollouts afterwards.
func (r *KeycloakClientCredentialReconciler) tendConsumers(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, out *sourced) {
	rot := inProgress(kcc)
	if rot == nil || rot.Phase != secretsv1beta1.RotationGracePeriod || consumersOf(kcc) == nil || !sameClient(kcc, rot) {
		return
	}
	if rot.ConsumersDeadline == nil {
		r.restartConsumers(ctx, kcc, rot, out)
		return
	}
	for i := range rot.Consumers {
		if c := &rot.Consumers[i]; c.State == secretsv1beta1.ConsumerRollingOut {
			r.followConsumer(ctx, kcc, rot, c, out)
		}
	}
}

// restartConsumers finds the consumers, restarts them, and starts the
// wait for their rollouts.
func (r *KeycloakClientCredentialReconciler) restartConsumers(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus, out *sourced) {
	now := r.now()
	found, ignored := r.findConsumers(ctx, kcc)
	for _, why := range ignored {
		out.notices = append(out.notices, notice{corev1.EventTypeWarning, secretsv1beta1.ReasonConsumerIgnored, why})
	}
	rot.Consumers = nil
	names := make([]string, 0, len(found))
	for _, w := range found {
		c := secretsv1beta1.ConsumerStatus{Kind: w.kind, Namespace: w.obj.GetNamespace(), Name: w.obj.GetName(), State: secretsv1beta1.ConsumerRollingOut}
		r.restartConsumer(ctx, rot, w.obj, &c, now)
		rot.Consumers = append(rot.Consumers, c)
		names = append(names, consumerName(c))
	}
	deadline := metav1.NewTime(now.Add(kcc.RolloutTimeout()))
	if exp := rot.PreviousExpiresTime; exp != nil && exp.Before(&deadline) {
		deadline = *exp // Keycloak stops accepting the previous secret then anyway
	}
	rot.ConsumersDeadline = &deadline
	if len(names) > 0 {
		out.notices = append(out.notices, notice{corev1.EventTypeNormal, secretsv1beta1.ReasonConsumersRestarted,
			fmt.Sprintf("restarted %s; the previous secret stays valid until they have rolled out, %s at the latest", strings.Join(names, ", "), deadline.UTC().Format(time.RFC3339))})
	}
}

// restartConsumer restarts one workload as kubectl rollout restart does:
// a new pod template. The annotation's value is the rotation's
// distribution time, so a pass that repeats the restart (its status write
// was lost) changes nothing.
func (r *KeycloakClientCredentialReconciler) restartConsumer(ctx context.Context, rot *secretsv1beta1.RotationStatus, obj client.Object, c *secretsv1beta1.ConsumerStatus, now time.Time) {
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	tmpl := rollout.PodTemplate(obj)
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations[rollout.RestartedAtAnnotation] = rot.DistributedTime.UTC().Format(time.RFC3339)
	if err := r.Patch(ctx, obj, patch, client.FieldOwner(FieldManager)); err != nil {
		logf.FromContext(ctx).Error(err, "restart a consumer", "kind", c.Kind, "namespace", c.Namespace, "name", c.Name)
		c.Message = "restart failed, tried again: " + err.Error()
		return
	}
	at := metav1.NewTime(now)
	c.RestartedTime, c.Message = &at, "restarted"
}

// followConsumer reads one consumer and records how its rollout stands
// (restarting it first if its restart failed).
func (r *KeycloakClientCredentialReconciler) followConsumer(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus, c *secretsv1beta1.ConsumerStatus, out *sourced) {
	obj := rollout.New(c.Kind)
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		c.State, c.Message = secretsv1beta1.ConsumerGone, "the workload was deleted"
		return
	case err != nil:
		c.Message = "could not read the workload, tried again: " + err.Error()
		return
	case c.RestartedTime == nil:
		r.restartConsumer(ctx, rot, obj, c, r.now())
		return
	}
	done, message := rollout.Status(obj)
	c.Message = message
	if !done {
		return
	}
	at := metav1.NewTime(r.now())
	c.State, c.FinishedTime = secretsv1beta1.ConsumerRolledOut, &at
	out.notices = append(out.notices, notice{corev1.EventTypeNormal, secretsv1beta1.ReasonConsumerRolledOut,
		fmt.Sprintf("%s rolled out with the new secret of client %q (%s)", consumerName(*c), kcc.Spec.Source.ClientID, message)})
}

// restartOnChange restarts the consumers of the namespaces whose client
// secret changed outside a rotation (regenerated in Keycloak by hand): no
// grace kept the previous secret, so they are not waited for.
func (r *KeycloakClientCredentialReconciler) restartOnChange(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, namespaces []string) []notice {
	if consumersOf(kcc) == nil || len(namespaces) == 0 {
		return nil
	}
	found, _ := r.findConsumers(ctx, kcc)
	at := metav1.NewTime(r.now())
	var names []string
	for _, w := range found {
		if !slices.Contains(namespaces, w.obj.GetNamespace()) {
			continue
		}
		c := secretsv1beta1.ConsumerStatus{Kind: w.kind, Namespace: w.obj.GetNamespace(), Name: w.obj.GetName()}
		r.restartConsumer(ctx, &secretsv1beta1.RotationStatus{DistributedTime: &at}, w.obj, &c, at.Time)
		if c.RestartedTime != nil {
			names = append(names, consumerName(c))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []notice{{corev1.EventTypeNormal, secretsv1beta1.ReasonConsumersRestarted,
		fmt.Sprintf("the secret of client %q changed in Keycloak outside a rotation: restarted %s (no grace period kept the previous secret: their pods could not log in until they restarted)",
			kcc.Spec.Source.ClientID, strings.Join(names, ", "))}}
}

// workload is a consumer found, with its kind.
type workload struct {
	kind string
	obj  client.Object
}

// findConsumers lists the consumers of every target namespace that
// accepts the Secret and holds the operator's; ignored says why a named
// workload was not taken.
func (r *KeycloakClientCredentialReconciler) findConsumers(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (found []workload, ignored []string) {
	spec, secret := consumersOf(kcc), kcc.Spec.Target.SecretName
	seen, namedSeen := map[string]bool{}, map[string]bool{}
	defer func() {
		for _, w := range spec.Workloads {
			if !namedSeen[w.Kind+"/"+w.Name] {
				ignored = append(ignored, fmt.Sprintf("%s %s not restarted: found in no target namespace that accepts Secret %s", w.Kind, w.Name, secret))
			}
		}
	}()
	for _, ns := range tenancy.TargetNamespaces(kcc) {
		_, owned := recordedUID(&kcc.Status, ns, secret)
		if !owned || r.targetRefusal(ctx, kcc, ns) != nil {
			continue // the workloads there are none of this resource's business
		}
		candidates, why := r.candidates(ctx, spec, ns)
		ignored = append(ignored, why...)
		for _, w := range candidates {
			key := w.kind + "/" + ns + "/" + w.obj.GetName()
			namedSeen[w.kind+"/"+w.obj.GetName()] = true
			switch {
			case seen[key]:
			case !rollout.References(rollout.PodTemplate(w.obj), secret):
				if named(spec, w.kind, w.obj.GetName()) {
					ignored = append(ignored, fmt.Sprintf("%s %s/%s not restarted: its pods do not read Secret %s", w.kind, ns, w.obj.GetName(), secret))
				}
			default:
				seen[key] = true
				found = append(found, w)
			}
		}
	}
	return found, ignored
}

// candidates are the workloads of ns the spec names, selects or (with
// discover) all of them; the pod templates are checked by the caller.
func (r *KeycloakClientCredentialReconciler) candidates(ctx context.Context, spec *secretsv1beta1.RotationConsumers, ns string) (out []workload, ignored []string) {
	for _, w := range spec.Workloads {
		obj := rollout.New(w.Kind)
		if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.Name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue // named for another target namespace, maybe
			}
			ignored = append(ignored, fmt.Sprintf("%s %s/%s not restarted: %v", w.Kind, ns, w.Name, err))
			continue
		}
		out = append(out, workload{w.Kind, obj})
	}
	if spec.Selector == nil && !spec.Discover {
		return out, ignored
	}
	opts := []client.ListOption{client.InNamespace(ns)}
	if spec.Selector != nil && !spec.Discover {
		selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
		if err != nil {
			return out, append(ignored, fmt.Sprintf("spec.rotation.consumers.selector: %v", err))
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: selector})
	}
	for _, kind := range rollout.Kinds {
		list := rollout.NewList(kind)
		if err := r.Reader.List(ctx, list, opts...); err != nil {
			ignored = append(ignored, fmt.Sprintf("list the %ss of namespace %s: %v", kind, ns, err))
			continue
		}
		for _, obj := range rollout.Items(list) {
			out = append(out, workload{kind, obj})
		}
	}
	return out, ignored
}

func named(spec *secretsv1beta1.RotationConsumers, kind, name string) bool {
	for _, w := range spec.Workloads {
		if w.Kind == kind && w.Name == name {
			return true
		}
	}
	return false
}

func consumerName(c secretsv1beta1.ConsumerStatus) string {
	return fmt.Sprintf("%s %s/%s", c.Kind, c.Namespace, c.Name)
}
