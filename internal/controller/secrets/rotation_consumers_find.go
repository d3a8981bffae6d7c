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

// Finding a rotation's consumers: the workloads of the target namespaces
// that accept the Secret, named, selected or discovered.

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// workload is a consumer found, with its kind.
type workload struct {
	kind string
	obj  client.Object
}

// findConsumers lists the consumers of every target namespace that
// accepts the Secret and holds the operator's; ignored says why a named
// workload was not taken (one message whether it is missing or reads
// another Secret: a tenant learns nothing of what a namespace holds); err
// is a failure to look, worth another try.
func (r *KeycloakClientCredentialReconciler) findConsumers(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (found []workload, ignored []string, err error) {
	spec, secret := consumersOf(kcc), kcc.Spec.Target.SecretName
	seen, restarted := map[string]bool{}, map[string]bool{}
	for _, ns := range tenancy.TargetNamespaces(kcc) {
		if why := r.accepts(ctx, kcc, ns); why != nil {
			if !errors.Is(why, errNotAccepted) {
				err = errors.Join(err, why)
			}
			continue // the workloads there are none of this resource's business
		}
		candidates, lookErr := r.candidates(ctx, spec, ns)
		err = errors.Join(err, lookErr)
		for _, w := range candidates {
			key := w.kind + "/" + ns + "/" + w.obj.GetName()
			if seen[key] || !rollout.References(rollout.PodTemplate(w.obj), secret) {
				continue
			}
			seen[key] = true
			if ok, why := rollout.Restartable(w.obj); !ok {
				ignored = append(ignored, fmt.Sprintf("%s %s/%s not restarted: %s", w.kind, ns, w.obj.GetName(), why))
				continue
			}
			restarted[w.kind+"/"+w.obj.GetName()] = true
			found = append(found, w)
		}
	}
	for _, w := range spec.Workloads {
		if !restarted[w.Kind+"/"+w.Name] {
			ignored = append(ignored, fmt.Sprintf("%s %s not restarted: no workload of that name in a target namespace that accepts Secret %s reads it", w.Kind, w.Name, secret))
		}
	}
	return found, ignored, err
}

// candidates are the workloads of ns the spec names, selects or (with
// discover) all of them; the pod templates are checked by the caller.
func (r *KeycloakClientCredentialReconciler) candidates(ctx context.Context, spec *secretsv1beta1.RotationConsumers, ns string) (out []workload, err error) {
	for _, w := range spec.Workloads {
		obj := rollout.New(w.Kind)
		if getErr := r.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.Name}, obj); getErr != nil {
			if !apierrors.IsNotFound(getErr) {
				err = errors.Join(err, fmt.Errorf("read %s %s/%s: %w", w.Kind, ns, w.Name, getErr))
			}
			continue
		}
		out = append(out, workload{w.Kind, obj})
	}
	if spec.Selector == nil && !spec.Discover {
		return out, err
	}
	opts := []client.ListOption{client.InNamespace(ns)}
	if spec.Selector != nil && !spec.Discover {
		selector, selErr := metav1.LabelSelectorAsSelector(spec.Selector)
		if selErr != nil {
			return out, errors.Join(err, fmt.Errorf("spec.rotation.consumers.selector: %w", selErr))
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: selector})
	}
	for _, kind := range rollout.Kinds {
		list := rollout.NewList(kind)
		if listErr := r.Reader.List(ctx, list, opts...); listErr != nil {
			err = errors.Join(err, fmt.Errorf("list the %ss of namespace %s: %w", kind, ns, listErr))
			continue
		}
		for _, obj := range rollout.Items(list) {
			out = append(out, workload{kind, obj})
		}
	}
	return out, err
}

func consumerName(c secretsv1beta1.ConsumerStatus) string {
	return fmt.Sprintf("%s %s/%s", c.Kind, c.Namespace, c.Name)
}
