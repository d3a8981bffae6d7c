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
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
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

// noGraceRestartWindow: a rotation without grace restarts its consumers in
// a pass after it completed, within this long (a rotation completed before
// consumers were named is not one to restart for).
const noGraceRestartWindow = 10 * time.Minute

// tendConsumers restarts the consumers of a rotation that entered its
// grace period (or completed without one), and follows their rollouts
// afterwards; an error leaves the restart to the next pass.
func (r *KeycloakClientCredentialReconciler) tendConsumers(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, out *rotationOutcome) error {
	rot := kcc.Status.Rotation
	if rot == nil || consumersOf(kcc) == nil || !sameClient(kcc, rot) || rot.DistributedTime == nil {
		return nil
	}
	now := r.now()
	switch {
	case rot.Phase == secretsv1beta1.RotationCompleted && !rot.WithGrace && rot.ConsumersDeadline == nil &&
		rot.CompletedTime != nil && now.Sub(rot.CompletedTime.Time) < noGraceRestartWindow:
		return r.restartConsumers(ctx, kcc, rot, false, out)
	case rot.Phase != secretsv1beta1.RotationGracePeriod:
		return nil
	case rot.ConsumersDeadline == nil:
		return r.restartConsumers(ctx, kcc, rot, true, out)
	}
	for i := range rot.Consumers {
		if c := &rot.Consumers[i]; c.State == secretsv1beta1.ConsumerRollingOut {
			r.followConsumer(ctx, kcc, rot, c, out)
		}
	}
	return nil
}

// restartConsumers finds the consumers and restarts them; wait says the
// previous secret waits for their rollouts (a rotation with grace), and
// starts that wait. A failure to look (not a refusal) is retried by the
// next pass while the grace lasts; then the consumers found are restarted.
func (r *KeycloakClientCredentialReconciler) restartConsumers(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus, wait bool, out *rotationOutcome) error {
	now := r.now()
	found, ignored, err := r.findConsumers(ctx, kcc)
	if err != nil && wait && rot.GraceEndsTime != nil && now.Before(rot.GraceEndsTime.Time) {
		return err
	}
	for _, why := range ignored {
		out.notices = append(out.notices, notice{corev1.EventTypeWarning, secretsv1beta1.ReasonConsumerIgnored, why})
	}
	state := secretsv1beta1.ConsumerRollingOut
	if !wait {
		state = secretsv1beta1.ConsumerRestarted
	}
	rot.Consumers = nil
	names := make([]string, 0, len(found))
	var failed error
	for _, w := range found {
		c := secretsv1beta1.ConsumerStatus{Kind: w.kind, Namespace: w.obj.GetNamespace(), Name: w.obj.GetName(), State: state}
		failed = errors.Join(failed, r.restartConsumer(ctx, restartValue(rot), w.obj, &c, now))
		rot.Consumers = append(rot.Consumers, c)
		names = append(names, consumerName(c))
	}
	// Counted from the distribution, so that a pass repeated after a lost
	// status write never moves it.
	deadline := metav1.NewTime(rot.DistributedTime.Add(kcc.RolloutTimeout()))
	if !wait {
		deadline = metav1.NewTime(now)
	} else if exp := rot.PreviousExpiresTime; exp != nil && exp.Before(&deadline) {
		deadline = *exp // Keycloak stops accepting the previous secret then anyway
	}
	rot.ConsumersDeadline = &deadline
	if len(names) > 0 {
		message := fmt.Sprintf("restarted %s; the previous secret stays valid until they have rolled out, %s at the latest", strings.Join(names, ", "), deadline.UTC().Format(time.RFC3339))
		if !wait {
			message = fmt.Sprintf("restarted %s; the rotation kept no previous secret, so they are not waited for", strings.Join(names, ", "))
		}
		out.notices = append(out.notices, notice{corev1.EventTypeNormal, secretsv1beta1.ReasonConsumersRestarted, message})
	}
	return failed
}

// restartValue is the restart annotation's value for a rotation: its
// distribution time, so that a pass that repeats a restart (its status
// write was lost) changes nothing.
func restartValue(rot *secretsv1beta1.RotationStatus) string {
	return rot.DistributedTime.UTC().Format(time.RFC3339)
}

// restartConsumer restarts one workload as kubectl rollout restart does: a
// new pod template, through its annotation alone.
func (r *KeycloakClientCredentialReconciler) restartConsumer(ctx context.Context, value string, obj client.Object, c *secretsv1beta1.ConsumerStatus, now time.Time) error {
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	tmpl := rollout.PodTemplate(obj)
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	tmpl.Annotations[rollout.RestartedAtAnnotation] = value
	if err := r.Patch(ctx, obj, patch, client.FieldOwner(FieldManager), client.DisableReadYourWritesConsistency); err != nil {
		c.Message = "restart failed, tried again"
		return fmt.Errorf("restart %s: %w", consumerName(*c), err)
	}
	at := metav1.NewTime(now)
	c.RestartedTime, c.Message = &at, "restarted"
	return nil
}

// followConsumer reads one consumer and records how its rollout stands,
// checking first that it is still one: its namespace accepts the Secret
// and holds the operator's, and its pods read it (else it is dropped,
// neither restarted nor waited for).
func (r *KeycloakClientCredentialReconciler) followConsumer(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, rot *secretsv1beta1.RotationStatus, c *secretsv1beta1.ConsumerStatus, out *rotationOutcome) {
	switch err := r.accepts(ctx, kcc, c.Namespace); {
	case errors.Is(err, errNotAccepted):
		c.State, c.Message = secretsv1beta1.ConsumerDropped, "no longer followed: the namespace no longer accepts the Secret"
		return
	case err != nil:
		c.Message = "could not tell whether the namespace still accepts the Secret, tried again"
		return
	}
	obj := rollout.New(c.Kind)
	err := r.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		c.State, c.Message = secretsv1beta1.ConsumerGone, "the workload was deleted"
		return
	case err != nil:
		c.Message = "could not read the workload, tried again"
		return
	case !rollout.References(rollout.PodTemplate(obj), kcc.Spec.Target.SecretName):
		c.State, c.Message = secretsv1beta1.ConsumerDropped, "no longer followed: its pods no longer read the Secret"
		return
	case c.RestartedTime == nil:
		_ = r.restartConsumer(ctx, restartValue(rot), obj, c, r.now()) // its message says so; tried again
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

// accepts is nil when the credential's consumers in ns may be touched: ns
// accepts the Secret from the credential's namespace, and the Secret there
// is the one the operator recorded writing (its UID, as the cache holds
// it); an error says why not, or that it could not tell.
func (r *KeycloakClientCredentialReconciler) accepts(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, ns string) error {
	if refused := r.targetRefusal(ctx, kcc, ns); refused != nil {
		if refused.err != nil {
			return refused.err
		}
		return errNotAccepted
	}
	var s corev1.Secret
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: kcc.Spec.Target.SecretName}, &s); err != nil {
		return errNotAccepted
	}
	if !isOwnedBy(&s, &kcc.Status) || !wasSynced(&kcc.Status, ns) {
		return errNotAccepted
	}
	return nil
}

// errNotAccepted: the namespace's workloads are none of the credential's
// business (no consent, or the Secret there is not the operator's).
var errNotAccepted = errors.New("the namespace does not take the Secret from this resource")
