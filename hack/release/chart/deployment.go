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
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var (
	caBundleLine = regexp.MustCompile(`(?m)^( *)caBundle: ` + caMark + `$`)
	injectLine   = regexp.MustCompile(`(?m)^( *)(cert-manager\.io/inject-ca-from: .*)$`)
	// resourcesBlock is the manager container's resources, as marshalled
	// (a container's fields are indented by 8).
	resourcesBlock = regexp.MustCompile(`(?m)^        resources:\n(?:          .*\n)+`)
)

// templateDeployment puts the chart's values into the marshalled
// Deployment.
func templateDeployment(text string) (string, error) {
	text, err := replaceOnce(text, "  replicas: 1\n", "  replicas: {{ .Values.replicas }}\n")
	if err == nil {
		text, err = replaceOnce(text, "imagePullPolicy: VKO-PULL", "imagePullPolicy: {{ .Values.image.pullPolicy }}")
	}
	if err == nil && !resourcesBlock.MatchString(text) {
		err = fmt.Errorf("no resources block at a container's indentation")
	}
	text = resourcesBlock.ReplaceAllString(text, "        resources:\n          {{- toYaml .Values.resources | nindent 10 }}\n")
	for _, r := range deploymentValues {
		if err == nil {
			text, err = replaceOnce(text, r.at, r.at+r.add)
		}
	}
	if err != nil {
		return "", err
	}
	return shardDeployments(text)
}

// shardLabel tells the pods of one shard's Deployment from the others'.
const shardLabel = "vault-keycloak-operator/shard"

// shardDeployments makes the Deployment one per shard (.Values.shards): each
// its own name, selector and --shard-index, all behind the one webhook
// Service. With one shard it is the Deployment of releases before shards,
// name and selector unchanged, so that an upgrade keeps it.
func shardDeployments(text string) (string, error) {
	label := func(indent int) string {
		pad := strings.Repeat(" ", indent)
		return pad + "{{- if gt $shards 1 }}\n" + pad + shardLabel + ": {{ $shard | quote }}\n" + pad + "{{- end }}\n"
	}
	var err error
	for _, r := range []struct{ at, add string }{
		{"    matchLabels:\n", label(6)},
		{"      labels:\n", label(8)}, // the pod's: the Deployment's are at 4
		{"        - --install-monitoring=false\n", "        {{- if gt $shards 1 }}\n        - --shards={{ $shards }}\n        - --shard-index={{ $shard }}\n        {{- end }}\n"},
	} {
		if err == nil {
			text, err = replaceOnce(text, r.at, r.at+r.add)
		}
	}
	name := "  name: " + namePrefix + "controller-manager\n"
	if err == nil {
		text, err = replaceOnce(text, name, strings.TrimSuffix(name, "\n")+"{{ if gt $shards 1 }}-shard-{{ $shard }}{{ end }}\n")
	}
	if err != nil {
		return "", err
	}
	// Inside range, "." is the shard: the release's values are "$"'s.
	text = strings.NewReplacer(".Values.", "$.Values.", ".Release.", "$.Release.", `include "vko.image" .`, `include "vko.image" $`).Replace(text)
	// A release upgraded with --reuse-values from values without shards
	// has none: one. The shard of each pod is the chart's alone: an extra
	// flag or variable for it would run one Deployment as one shard of N,
	// or every shard as the same one.
	return `{{- $shards := 1 }}{{ if hasKey .Values "shards" }}{{ $shards = int .Values.shards }}{{ end }}
{{- if or (lt $shards 1) (gt $shards 256) }}{{ fail (printf "shards %d: must be from 1 to 256" $shards) }}{{ end }}
{{- range .Values.extraArgs }}{{ if or (hasPrefix "--shards" .) (hasPrefix "--shard-index" .) (hasPrefix "-shards" .) (hasPrefix "-shard-index" .) }}{{ fail (printf "extraArgs %s: set the shards value instead (each shard's Deployment gets its own --shard-index)" .) }}{{ end }}{{ end }}
{{- range .Values.extraEnv }}{{ if has .name (list "VKO_SHARDS" "VKO_SHARD_INDEX") }}{{ fail (printf "extraEnv %s: set the shards value instead (each shard's Deployment gets its own --shard-index)" .name) }}{{ end }}{{ end }}
{{- range $shard := until $shards }}
---
` + text + "{{- end }}\n", nil
}

// deploymentValues are the chart's values for the Deployment, each added
// after a line of the marshalled Deployment that holds one place (yaml
// marshals keys in order: the Deployment's metadata comes first, then the
// pod template's).
var deploymentValues = []struct{ at, add string }{
	{"metadata:\n  labels:\n", "    {{- with .Values.deploymentLabels }}\n    {{- toYaml . | nindent 4 }}\n    {{- end }}\n"},
	{"metadata:\n", "  {{- with .Values.deploymentAnnotations }}\n  annotations:\n    {{- toYaml . | nindent 4 }}\n  {{- end }}\n"},
	{"    metadata:\n      annotations:\n", "        {{- with .Values.podAnnotations }}\n        {{- toYaml . | nindent 8 }}\n        {{- end }}\n"},
	{"      labels:\n", "        {{- with .Values.podLabels }}\n        {{- toYaml . | nindent 8 }}\n        {{- end }}\n"},
	{"        - --install-monitoring=false\n", "        {{- range .Values.extraArgs }}\n        - {{ . | quote }}\n        {{- end }}\n"},
	{"              fieldPath: metadata.namespace\n", "        {{- with .Values.extraEnv }}\n        {{- toYaml . | nindent 8 }}\n        {{- end }}\n"},
	{"      terminationGracePeriodSeconds: 10\n", podPlacement},
}

// podPlacement is where the pod may run, and its priority.
const podPlacement = `      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
`

// deployment puts the image, its pull policy and the certificate Secret
// into marks.
func deployment(u *unstructured.Unstructured) error {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		return fmt.Errorf("deployment %s: %d containers, want the manager alone", u.GetName(), len(containers))
	}
	c := containers[0].(map[string]any)
	c["image"] = imageMark
	c["imagePullPolicy"] = "VKO-PULL"
	// The chart renders the ServiceMonitor and PrometheusRule itself
	// (monitoring.*): the manager must not install a second pair.
	args, _, _ := unstructured.NestedSlice(c, "args")
	c["args"] = append(args, "--install-monitoring=false")
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		return err
	}
	volumes, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		if s, ok := v.(map[string]any)["secret"].(map[string]any); ok {
			s["secretName"] = secretMark
		}
	}
	return unstructured.SetNestedSlice(u.Object, volumes, "spec", "template", "spec", "volumes")
}

// replaceOnce replaces old in text, which must hold it.
func replaceOnce(text, old, new string) (string, error) {
	if !strings.Contains(text, old) {
		return "", fmt.Errorf("%q is not where the chart templates it", old)
	}
	return strings.Replace(text, old, new, 1), nil
}
