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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// settingsConfigMap, in the operator's namespace, sets the manager's flags
// by their names (max-concurrent-reconciles: "8"). It is the one way that
// reaches the manager on every install path: OLM v1 passes neither flags
// nor environment, a Subscription only environment, and a ConfigMap the
// admin owns works under OLM v0 and v1, Helm and kustomize alike.
const settingsConfigMap = "vault-keycloak-operator-settings"

// readSettings applies the ConfigMap's settings to the command line's
// flags, reading it with the manager's own identity.
func readSettings(cfg *rest.Config, namespace string) ([]string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return applySettings(ctx, cs, flag.CommandLine, namespace)
}

// notSettable are flags the ConfigMap cannot set: where to find the API
// server and the ConfigMap itself, and the shard a pod is (every replica
// reads the one ConfigMap; the chart's shards value sets both per
// Deployment), each with why.
var notSettable = map[string]string{
	"kubeconfig":         "give it on the command line or in the environment",
	"operator-namespace": "give it on the command line or in the environment",
	"shards":             "every replica reads this ConfigMap, and each shard's Deployment needs its own --shard-index: set the Helm chart's shards value, or --shards and --shard-index on each Deployment",
	"shard-index":        "every replica reads this ConfigMap, and each shard's Deployment needs its own --shard-index: set the Helm chart's shards value, or --shards and --shard-index on each Deployment",
}

// applySettings sets each flag the ConfigMap names, unless the command line
// gave it: a flag on the command line wins, then the ConfigMap, then the
// flag's environment variable, then its default. It returns the flags it
// set. A key that is no flag, or a value the flag refuses, fails the start
// naming the key (every such key at once).
func applySettings(ctx context.Context, cs kubernetes.Interface, fs *flag.FlagSet, namespace string) ([]string, error) {
	if namespace == "" {
		return nil, nil // a local run: no operator namespace, no ConfigMap
	}
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, settingsConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read ConfigMap %s/%s of the manager's settings: %w", namespace, settingsConfigMap, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	var set []string
	for _, k := range keys {
		switch {
		case fs.Lookup(k) == nil:
			errs = append(errs, fmt.Errorf("key %q is no flag of the manager (docs/reference.md lists them)", k))
		case notSettable[k] != "":
			errs = append(errs, fmt.Errorf("key %q cannot be set here: %s", k, notSettable[k]))
		case given[k]:
			// The command line wins.
		default:
			set = append(set, k)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", namespace, settingsConfigMap, errors.Join(errs...))
	}
	for _, k := range set {
		if err := fs.Set(k, cm.Data[k]); err != nil {
			errs = append(errs, fmt.Errorf("key %q: %q is not a value of --%s (%s): %w", k, cm.Data[k], k, fs.Lookup(k).Usage, err))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", namespace, settingsConfigMap, errors.Join(errs...))
	}
	return set, nil
}
