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

package bundle

import (
	"fmt"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// inputs sorts the objects kustomize produced by what the bundle does with them.
type inputs struct {
	csv            *v1alpha1.ClusterServiceVersion
	crds           []*unstructured.Unstructured
	deployments    []appsv1.Deployment
	serviceAccount string
	roles          map[string][]rbacv1.PolicyRule // "Role/name" or "ClusterRole/name"
	clusterRoles   []*unstructured.Unstructured
	bindings       []rbacv1.RoleBinding // ClusterRoleBindings too, by kind of roleRef
	webhooks       []v1alpha1.WebhookDescription
	webhookService string
	services       []*unstructured.Unstructured
	examples       []map[string]any
	scorecard      *unstructured.Unstructured
}

func (in *inputs) add(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Kind == "ClusterServiceVersion":
		in.csv = &v1alpha1.ClusterServiceVersion{}
		return fromUnstructured(u, in.csv)
	case gvk.Kind == "CustomResourceDefinition":
		in.crds = append(in.crds, u)
	case gvk.Kind == "Deployment":
		var d appsv1.Deployment
		if err := fromUnstructured(u, &d); err != nil {
			return err
		}
		in.deployments = append(in.deployments, d)
	case gvk.Kind == "ServiceAccount":
		in.serviceAccount = u.GetName()
	case gvk.Kind == "Role" || gvk.Kind == kindClusterRole:
		var r rbacv1.ClusterRole
		if err := fromUnstructured(u, &r); err != nil {
			return err
		}
		in.roles[gvk.Kind+"/"+u.GetName()] = r.Rules
		if gvk.Kind == kindClusterRole {
			in.clusterRoles = append(in.clusterRoles, u)
		}
	case gvk.Kind == "RoleBinding" || gvk.Kind == "ClusterRoleBinding":
		var rb rbacv1.RoleBinding
		if err := fromUnstructured(u, &rb); err != nil {
			return err
		}
		in.bindings = append(in.bindings, rb)
	case gvk.Kind == "MutatingWebhookConfiguration" || gvk.Kind == "ValidatingWebhookConfiguration":
		return in.addWebhooks(u)
	case gvk.Kind == "Service":
		in.services = append(in.services, u)
	case gvk.Kind == "Namespace":
		// OLM installs into the namespace the OperatorGroup names.
	case gvk.Group == "scorecard.operatorframework.io":
		in.scorecard = u
	case strings.HasSuffix(gvk.Group, ".exemple.com") || strings.HasSuffix(gvk.Group, ".carbogame.com"):
		example := u.DeepCopy()
		unstructured.RemoveNestedField(example.Object, "metadata", "namespace")
		in.examples = append(in.examples, example.Object)
	default:
		return fmt.Errorf("config/manifests produced %s %s, which the bundle generator does not place", gvk, u.GetName())
	}
	return nil
}

func (in *inputs) addWebhooks(u *unstructured.Unstructured) error {
	typ := v1alpha1.ValidatingAdmissionWebhook
	var hooks []admissionregistrationv1.ValidatingWebhook
	if u.GetKind() == "MutatingWebhookConfiguration" {
		typ = v1alpha1.MutatingAdmissionWebhook
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		if err := fromUnstructured(u, &cfg); err != nil {
			return err
		}
		for _, w := range cfg.Webhooks {
			hooks = append(hooks, admissionregistrationv1.ValidatingWebhook{
				Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
				ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions,
			})
		}
	} else {
		var cfg admissionregistrationv1.ValidatingWebhookConfiguration
		if err := fromUnstructured(u, &cfg); err != nil {
			return err
		}
		hooks = cfg.Webhooks
	}
	for _, w := range hooks {
		var path *string
		if w.ClientConfig.Service != nil {
			path = w.ClientConfig.Service.Path
			in.webhookService = w.ClientConfig.Service.Name
		}
		in.webhooks = append(in.webhooks, v1alpha1.WebhookDescription{
			GenerateName: w.Name, Type: typ, ContainerPort: 443, TargetPort: ptr(intstr.FromInt32(webhookServicePort)),
			Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy, ObjectSelector: w.ObjectSelector,
			SideEffects: w.SideEffects, TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions, WebhookPath: path,
		})
	}
	return nil
}
