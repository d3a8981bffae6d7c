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

// Package bundle generates the OLM bundle from config/, as
// 'kustomize build config/manifests | operator-sdk generate bundle' would:
// the CSV's install strategy, permissions and webhook definitions come from
// what controller-gen and kustomize produce, its descriptors and prose from
// the hand-written base CSV. The operator-sdk CLI cannot be installed here;
// this is a small program on the operator-framework/api types instead.
package bundle

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Options of a generation.
type Options struct {
	// ManifestsDir is config/manifests.
	ManifestsDir string
	// Version of the operator, x.y.z.
	Version string
	// Image of the manager.
	Image string
	// Replaces names the CSV this one upgrades from, if any.
	Replaces string
	// CreatedAt is the release date (YYYY-MM-DD) once the release is cut,
	// the CSV's createdAt that OperatorHub shows; "" before (the bundle of
	// every commit stays the same until the release dates it).
	CreatedAt string
	// Package, Channels and DefaultChannel go into metadata/annotations.yaml.
	Package, Channels, DefaultChannel string
	// RetireVersions are API versions this release no longer serves: they
	// leave the CRDs, the CSV's owned CRDs and the examples.
	RetireVersions []string
}

// Bundle is a generated bundle, ready to be written.
type Bundle struct {
	CSV *v1alpha1.ClusterServiceVersion
	// Manifests besides the CSV: CRDs, Services, unbound ClusterRoles.
	Manifests []*unstructured.Unstructured
	// Scorecard is the scorecard configuration.
	Scorecard *unstructured.Unstructured
	opts      Options
}

const kindClusterRole = "ClusterRole"

// webhookServicePort is where the manager serves its webhooks.
const webhookServicePort = 9443

// Generate builds config/manifests and turns it into a bundle.
func Generate(opts Options) (*Bundle, error) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), opts.ManifestsDir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", opts.ManifestsDir, err)
	}
	in := &inputs{roles: map[string][]rbacv1.PolicyRule{}}
	for _, res := range resources.Resources() {
		obj, err := res.Map()
		if err != nil {
			return nil, err
		}
		if err := in.add(&unstructured.Unstructured{Object: obj}); err != nil {
			return nil, err
		}
	}
	if in.csv == nil {
		return nil, fmt.Errorf("%s holds no ClusterServiceVersion base", opts.ManifestsDir)
	}
	if err := in.retire(opts.RetireVersions); err != nil {
		return nil, err
	}
	b := &Bundle{CSV: in.csv, Scorecard: in.scorecard, opts: opts}
	if err := b.fill(in, opts); err != nil {
		return nil, err
	}
	return b, nil
}

// fill completes the base CSV with everything generated.
func (b *Bundle) fill(in *inputs, opts Options) error {
	csv := b.CSV
	csv.Name = opts.Package + ".v" + opts.Version
	csv.Namespace = ""
	v, err := semver.Parse(opts.Version)
	if err != nil {
		return fmt.Errorf("version %q: %w", opts.Version, err)
	}
	csv.Spec.Version = version.OperatorVersion{Version: v}
	csv.Spec.Replaces = opts.Replaces
	csv.Annotations["containerImage"] = opts.Image
	if opts.CreatedAt != "" {
		csv.Annotations["createdAt"] = opts.CreatedAt
	}

	examples, err := json.MarshalIndent(in.examples, "", "  ")
	if err != nil {
		return err
	}
	csv.Annotations["alm-examples"] = string(examples)

	icon, err := os.ReadFile(filepath.Join(opts.ManifestsDir, "icon.svg"))
	if err != nil {
		return fmt.Errorf("icon: %w", err)
	}
	csv.Spec.Icon = []v1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString(icon), MediaType: "image/svg+xml"}}

	if len(in.deployments) != 1 {
		return fmt.Errorf("want exactly one Deployment in config/manifests, found %d", len(in.deployments))
	}
	dep := in.deployments[0]
	for i := range dep.Spec.Template.Spec.Containers {
		if dep.Spec.Template.Spec.Containers[i].Name == "manager" {
			dep.Spec.Template.Spec.Containers[i].Image = opts.Image
		}
	}
	strategy := v1alpha1.StrategyDetailsDeployment{
		DeploymentSpecs: []v1alpha1.StrategyDeploymentSpec{{Name: dep.Name, Spec: dep.Spec, Label: dep.Labels}},
	}

	// RBAC bound to the manager's ServiceAccount goes into the CSV; OLM
	// creates it with the ServiceAccount. Other ClusterRoles (for users:
	// editors, viewers, metrics readers) ship as bundle manifests.
	bound := map[string]bool{}
	for _, rb := range in.bindings {
		if !slices.ContainsFunc(rb.Subjects, func(s rbacv1.Subject) bool { return s.Kind == rbacv1.ServiceAccountKind && s.Name == in.serviceAccount }) {
			continue
		}
		key := rb.RoleRef.Kind + "/" + rb.RoleRef.Name
		rules, ok := in.roles[key]
		if !ok {
			return fmt.Errorf("binding %s refers to %s, which config/ does not define", rb.Name, key)
		}
		bound[key] = true
		perm := v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: in.serviceAccount, Rules: rules}
		if rb.Kind == "ClusterRoleBinding" || rb.RoleRef.Kind == kindClusterRole && rb.Namespace == "" {
			strategy.ClusterPermissions = append(strategy.ClusterPermissions, perm)
		} else {
			strategy.Permissions = append(strategy.Permissions, perm)
		}
	}
	strategy.ClusterPermissions = mergePermissions(strategy.ClusterPermissions)
	strategy.Permissions = mergePermissions(strategy.Permissions)
	csv.Spec.InstallStrategy = v1alpha1.NamedInstallStrategy{StrategyName: v1alpha1.InstallStrategyNameDeployment, StrategySpec: strategy}

	for _, cr := range in.clusterRoles {
		if !bound["ClusterRole/"+cr.GetName()] {
			b.Manifests = append(b.Manifests, cr)
		}
	}
	for _, svc := range in.services {
		if svc.GetName() != in.webhookService { // OLM creates the webhook Service
			b.Manifests = append(b.Manifests, svc)
		}
	}

	// Webhooks: admission ones from the generated configurations, and one
	// conversion webhook for every CRD that converts through it.
	var conversionCRDs []string
	for _, crd := range in.crds {
		if strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); strategy == "Webhook" {
			// The CRD keeps its clientConfig (a Webhook strategy needs one to
			// validate); OLM replaces it with its own Service and CA.
			conversionCRDs = append(conversionCRDs, crd.GetName())
		}
		b.Manifests = append(b.Manifests, crd)
	}
	webhooks := in.webhooks
	if len(conversionCRDs) > 0 {
		slices.Sort(conversionCRDs)
		webhooks = append(webhooks, v1alpha1.WebhookDescription{
			GenerateName: "cconversion.carbogame.com", Type: v1alpha1.ConversionWebhook, ContainerPort: 443,
			TargetPort: ptr(intstr.FromInt32(webhookServicePort)), SideEffects: ptr(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"}, WebhookPath: ptr("/convert"), ConversionCRDs: conversionCRDs,
		})
	}
	for i := range webhooks {
		webhooks[i].DeploymentName = dep.Name
	}
	csv.Spec.WebhookDefinitions = webhooks
	return nil
}

// mergePermissions joins the rules of the same ServiceAccount.
func mergePermissions(perms []v1alpha1.StrategyDeploymentPermissions) []v1alpha1.StrategyDeploymentPermissions {
	var out []v1alpha1.StrategyDeploymentPermissions
	for _, p := range perms {
		i := slices.IndexFunc(out, func(o v1alpha1.StrategyDeploymentPermissions) bool {
			return o.ServiceAccountName == p.ServiceAccountName
		})
		if i < 0 {
			out = append(out, p)
			continue
		}
		out[i].Rules = append(out[i].Rules, p.Rules...)
	}
	return out
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
