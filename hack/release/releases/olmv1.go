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

package releases

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// olmv1Kinds are the kinds besides CSVs and CRDs that OLM v1 installs from
// a registry+v1 bundle (operator-registry's supported resources).
var olmv1Kinds = []string{
	"ClusterRole", "ClusterRoleBinding", "Service", "ServiceAccount", "Role", "RoleBinding", "Secret", "ConfigMap",
	"PrometheusRule", "ServiceMonitor", "PodMonitor", "PodDisruptionBudget", "NetworkPolicy", "PriorityClass",
	"VerticalPodAutoscaler", "ConsoleYAMLSample", "ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "ConsolePlugin",
}

// olmv1Dependencies are the properties OLM v1 refuses: it resolves no
// dependencies.
var olmv1Dependencies = []string{"olm.package.required", "olm.gvk.required", "olm.constraint"}

// OLMv1Problems says what in the registry+v1 bundle at dir OLM v1
// (operator-controller) would refuse to install, with its default feature
// gates: the rules its bundle validators, its manifest provider and its
// resolver apply. Webhooks are fine where the cluster has cert-manager or
// OpenShift's service CA (its certificate providers).
func OLMv1Problems(dir string) ([]string, error) {
	objects, err := readManifests(filepath.Join(dir, "manifests"))
	if err != nil {
		return nil, err
	}
	var problems []string
	var csv *v1alpha1.ClusterServiceVersion
	crds := map[string]int{}
	for _, o := range objects {
		switch kind := o.GetKind(); {
		case kind == "ClusterServiceVersion":
			if csv != nil {
				problems = append(problems, "manifests/: more than one ClusterServiceVersion")
			}
			csv = &v1alpha1.ClusterServiceVersion{}
			data, _ := yaml.Marshal(o.Object)
			if err := yaml.Unmarshal(data, csv); err != nil {
				return nil, fmt.Errorf("read the CSV: %w", err)
			}
		case kind == "CustomResourceDefinition":
			crds[o.GetName()]++
			if crds[o.GetName()] == 2 {
				problems = append(problems, fmt.Sprintf("CRD %s: twice in the bundle", o.GetName()))
			}
		case !slices.Contains(olmv1Kinds, kind):
			problems = append(problems, fmt.Sprintf("%s %s: a kind OLM v1 does not install from a bundle", kind, o.GetName()))
		case strings.HasSuffix(o.GroupVersionKind().Group, "monitoring.coreos.com"):
			// OLM v0 fails the whole InstallPlan on a cluster without the
			// Prometheus Operator's CRDs: most clusters OperatorHub serves.
			problems = append(problems, fmt.Sprintf("%s %s: OLM fails the whole install where the cluster lacks the Prometheus Operator's API (ship it in the Helm chart and config/prometheus)", kind, o.GetName()))
		}
	}
	if csv == nil {
		return append(problems, "manifests/: no ClusterServiceVersion"), nil
	}
	annotations, err := readAnnotations(dir)
	if err != nil {
		return nil, err
	}
	if annotations["operators.operatorframework.io.bundle.package.v1"] == "" {
		problems = append(problems, "metadata/annotations.yaml: no package name (operators.operatorframework.io.bundle.package.v1)")
	}
	problems = append(problems, csvOLMv1Problems(csv, crds)...)
	deps, err := dependencyProblems(dir)
	if err != nil {
		return nil, err
	}
	return append(problems, deps...), nil
}

func csvOLMv1Problems(csv *v1alpha1.ClusterServiceVersion, crds map[string]int) []string {
	var problems []string
	supported := map[v1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		supported[m.Type] = m.Supported
	}
	if !supported[v1alpha1.InstallModeTypeAllNamespaces] {
		problems = append(problems, "CSV spec.installModes: AllNamespaces must be supported (OLM v1 installs for all namespaces unless its alpha gate SingleOwnNamespaceInstallSupport is on)")
	}
	if len(csv.Spec.APIServiceDefinitions.Owned) > 0 {
		problems = append(problems, "CSV spec.apiservicedefinitions.owned: OLM v1 does not install API services")
	}
	deployments := map[string]bool{}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if deployments[d.Name] {
			problems = append(problems, fmt.Sprintf("CSV deployment %q: named twice", d.Name))
		}
		deployments[d.Name] = true
		for _, msg := range validation.IsDNS1123Subdomain(d.Name) {
			problems = append(problems, fmt.Sprintf("CSV deployment %q: %s", d.Name, msg))
		}
	}
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		if crds[owned.Name] == 0 {
			problems = append(problems, fmt.Sprintf("CSV owns CRD %s, which the bundle lacks", owned.Name))
		}
	}
	problems = append(problems, webhookOLMv1Problems(csv, supported, deployments)...)
	return problems
}

func webhookOLMv1Problems(csv *v1alpha1.ClusterServiceVersion, supported map[v1alpha1.InstallModeType]bool, deployments map[string]bool) []string {
	var problems []string
	owned := map[string]bool{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[o.Name] = true
	}
	names := map[v1alpha1.WebhookAdmissionType]map[string]bool{}
	converted := map[string]bool{}
	for _, w := range csv.Spec.WebhookDefinitions {
		where := fmt.Sprintf("CSV webhook %q (%s)", w.GenerateName, w.Type)
		if !deployments[w.DeploymentName] {
			problems = append(problems, fmt.Sprintf("%s: deploymentName %q is no deployment of the CSV", where, w.DeploymentName))
		}
		if names[w.Type] == nil {
			names[w.Type] = map[string]bool{}
		}
		if names[w.Type][w.GenerateName] {
			problems = append(problems, where+": generateName used twice")
		}
		names[w.Type][w.GenerateName] = true
		for _, msg := range validation.IsDNS1123Subdomain(w.GenerateName) {
			problems = append(problems, fmt.Sprintf("%s: generateName: %s", where, msg))
		}
		if w.Type == v1alpha1.ConversionWebhook {
			for m, on := range supported {
				if on && m != v1alpha1.InstallModeTypeAllNamespaces {
					problems = append(problems, fmt.Sprintf("%s: a conversion webhook needs a bundle that supports AllNamespaces alone (it supports %s)", where, m))
				}
			}
			for _, crd := range w.ConversionCRDs {
				if converted[crd] {
					problems = append(problems, fmt.Sprintf("%s: CRD %s has a conversion webhook already", where, crd))
				}
				converted[crd] = true
				if !owned[crd] {
					problems = append(problems, fmt.Sprintf("%s: converts CRD %s, which the CSV does not own", where, crd))
				}
			}
			continue
		}
		for _, rule := range w.Rules {
			for _, group := range rule.APIGroups {
				switch group {
				case "*", "olm.operatorframework.io":
					problems = append(problems, fmt.Sprintf("%s: rules may not match API group %q", where, group))
				case "admissionregistration.k8s.io":
					for _, r := range rule.Resources {
						if r == "*" || strings.Contains(strings.ToLower(r), "webhookconfiguration") {
							problems = append(problems, fmt.Sprintf("%s: rules may not match %s/%s", where, group, r))
						}
					}
				}
			}
		}
	}
	return problems
}

// dependencyProblems: OLM v1 resolves no dependencies, whether declared in
// metadata/properties.yaml or metadata/dependencies.yaml (which OLM v0 reads).
func dependencyProblems(dir string) ([]string, error) {
	var problems []string
	for _, file := range []string{"properties.yaml", "dependencies.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, "metadata", file))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var doc struct {
			Properties   []struct{ Type string } `json:"properties"`
			Dependencies []struct{ Type string } `json:"dependencies"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("metadata/%s: %w", file, err)
		}
		for _, p := range append(doc.Properties, doc.Dependencies...) {
			if slices.Contains(olmv1Dependencies, p.Type) || file == "dependencies.yaml" {
				problems = append(problems, fmt.Sprintf("metadata/%s: a dependency (%s): OLM v1 resolves none", file, p.Type))
			}
		}
	}
	return problems, nil
}

// readManifests reads manifests/, one object per file, as OLM does; a
// subdirectory is refused, as OLM v1 refuses it.
func readManifests(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read bundle manifests: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() {
			return nil, fmt.Errorf("%s: a subdirectory in manifests/ (OLM v1 refuses it)", filepath.Join(dir, e.Name()))
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, u)
	}
	return out, nil
}

// readAnnotations reads metadata/annotations.yaml.
func readAnnotations(dir string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, fmt.Errorf("read bundle annotations: %w", err)
	}
	var doc struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("metadata/annotations.yaml: %w", err)
	}
	return doc.Annotations, nil
}
