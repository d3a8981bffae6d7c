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

// Package chart renders the Helm chart (dist/chart, make chart) from the
// same config/ the OLM bundle comes from: kustomize builds config/default
// (CRDs, RBAC, webhooks, the manager, cert-manager's Issuer and Certificate)
// and the opt-in monitoring (config/prometheus, config/grafana), and each
// object becomes one template, with the release's namespace, the image, the
// webhook certificate's source and the monitoring made values. What is not
// generated (values, helpers, notes) is under static/.
package chart

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

//go:embed all:static
var static embed.FS

// Options say where config/ is and which version the chart is.
type Options struct {
	ConfigDir string
	Version   string
}

const (
	namePrefix = "vault-keycloak-operator-"
	// configNamespace is config/default's namespace: the release's in the chart.
	configNamespace = "vault-keycloak-operator-system"
	// The placeholders the objects are written with, replaced by template
	// text once they are YAML.
	crdKind    = "CustomResourceDefinition"
	nsMark     = "VKO-NAMESPACE"
	caMark     = "VKO-CA-BUNDLE"
	imageMark  = "VKO-IMAGE"
	secretMark = "VKO-CERT-SECRET"
)

// Generate returns the chart's files by their path in the chart.
func Generate(opts Options) (map[string][]byte, error) {
	files := map[string][]byte{
		"Chart.yaml": fmt.Appendf(nil, `apiVersion: v2
name: vault-keycloak-operator
description: Writes Vault policies and Kubernetes-auth roles for application namespaces, and copies Keycloak client secrets into Secrets.
type: application
# The chart and the operator move together: both are the VERSION of the repository.
version: %[1]s
appVersion: %[1]s
kubeVersion: ">= 1.30.0-0"
home: https://github.com/carbogame/vault-keycloak-operator
icon: https://raw.githubusercontent.com/carbogame/vault-keycloak-operator/main/config/manifests/icon.svg
keywords: [vault, keycloak, secrets, policy, oidc, operator]
`, opts.Version),
	}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := static.ReadFile(p)
		files[strings.TrimPrefix(p, "static/")] = data
		return err
	})
	if err != nil {
		return nil, err
	}
	core, err := build(path.Join(opts.ConfigDir, "default"))
	if err != nil {
		return nil, err
	}
	for _, u := range core {
		name, data, err := template(u)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue
		}
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("two objects would be written to %s", name)
		}
		files[name] = data
	}
	for dir, condition := range map[string]map[string]string{
		"prometheus": {
			"ServiceMonitor": `and .Values.monitoring.serviceMonitor (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")`,
			"PrometheusRule": `and .Values.monitoring.alerts (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule")`,
		},
		"grafana": {"ConfigMap": `.Values.monitoring.dashboard`},
	} {
		objects, err := build(path.Join(opts.ConfigDir, dir))
		if err != nil {
			return nil, err
		}
		for _, u := range objects {
			cond, ok := condition[u.GetKind()]
			if !ok {
				return nil, fmt.Errorf("config/%s: %s %s has no condition in the chart", dir, u.GetKind(), u.GetName())
			}
			if !strings.HasPrefix(u.GetName(), namePrefix) {
				u.SetName(namePrefix + u.GetName())
			}
			u.SetNamespace(configNamespace)
			name, data, err := template(u)
			if err != nil {
				return nil, err
			}
			// The labels the admin's Prometheus or Grafana selects by
			// (kube-prometheus-stack: release), and Grafana's namespace.
			text, err := replaceOnce(string(data), "  labels:\n", "  labels:\n    {{- with .Values.monitoring.labels }}\n    {{- toYaml . | nindent 4 }}\n    {{- end }}\n")
			if err == nil && u.GetKind() == "ConfigMap" {
				text, err = replaceOnce(text, "  namespace: {{ .Release.Namespace }}\n", "  namespace: {{ .Values.monitoring.dashboardNamespace | default .Release.Namespace }}\n")
			}
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
			}
			files[name] = fmt.Appendf(nil, "{{- if %s }}\n%s{{- end }}\n", cond, text)
		}
	}
	return files, nil
}

// build runs kustomize on dir.
func build(dir string) ([]*unstructured.Unstructured, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetKind()+out[i].GetName() < out[j].GetKind()+out[j].GetName() })
	return out, nil
}

// template turns one object into its template: its path in the chart ("" to
// leave it out) and its text.
func template(u *unstructured.Unstructured) (string, []byte, error) {
	kind := u.GetKind()
	if kind == "Namespace" {
		return "", nil, nil // helm install --namespace, --create-namespace
	}
	if u.GetNamespace() != "" {
		u.SetNamespace(nsMark)
	}
	if labels := u.GetLabels(); labels["app.kubernetes.io/managed-by"] != "" {
		labels["app.kubernetes.io/managed-by"] = "Helm"
		u.SetLabels(labels)
	}
	certManagerOnly := false
	switch kind {
	case crdKind:
		if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "conversion", "webhook", "clientConfig"); ok {
			if err := unstructured.SetNestedField(u.Object, caMark, "spec", "conversion", "webhook", "clientConfig", "caBundle"); err != nil {
				return "", nil, err
			}
		}
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for _, h := range hooks {
			if cc, ok := h.(map[string]any)["clientConfig"].(map[string]any); ok {
				cc["caBundle"] = caMark
			}
		}
		if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
			return "", nil, err
		}
	case "Issuer", "Certificate":
		certManagerOnly = true
		if kind == "Certificate" {
			if err := unstructured.SetNestedField(u.Object, secretMark, "spec", "secretName"); err != nil {
				return "", nil, err
			}
		}
	case "Deployment":
		if err := deployment(u); err != nil {
			return "", nil, err
		}
	}
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return "", nil, err
	}
	// Text that Helm would take for its own (Prometheus's {{ $labels }},
	// a description) is escaped before the chart's templates go in.
	text := strings.NewReplacer("{{", `{{ "{{" }}`, "}}", `{{ "}}" }}`).Replace(string(data))
	text = strings.ReplaceAll(text, configNamespace, nsMark)
	text = caBundleLine.ReplaceAllString(text, "$1{{- with (include \"vko.caBundle\" .) }}\n${1}caBundle: {{ . }}\n$1{{- end }}")
	text = injectLine.ReplaceAllString(text, "$1{{- if eq (include \"vko.certManager\" .) \"true\" }}\n$1$2\n$1{{- end }}")
	text = strings.ReplaceAll(text, nsMark, "{{ .Release.Namespace }}")
	text = strings.ReplaceAll(text, imageMark, `{{ include "vko.image" . }}`)
	text = strings.ReplaceAll(text, secretMark, "{{ .Values.webhook.certSecret }}")
	switch {
	case kind == crdKind:
		text, err = replaceOnce(text, "  annotations:\n", "  annotations:\n    {{- if .Values.crds.keep }}\n    helm.sh/resource-policy: keep\n    {{- end }}\n")
	case kind == "Deployment":
		text, err = templateDeployment(text)
	case certManagerOnly:
		text = "{{- if eq (include \"vko.certManager\" .) \"true\" }}\n" + text + "{{- end }}\n"
	}
	if err != nil {
		return "", nil, fmt.Errorf("%s %s: %w (config/ changed: update hack/release/chart)", kind, u.GetName(), err)
	}
	dir := "templates/"
	if kind == crdKind {
		dir = "templates/crds/"
	}
	return dir + strings.ToLower(kind) + "-" + strings.TrimPrefix(u.GetName(), namePrefix) + ".yaml", []byte(text), nil
}
