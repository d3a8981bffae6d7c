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
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func settingsOf(data map[string]string) *fake.Clientset {
	return fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: settingsConfigMap, Namespace: "vko"}, Data: data})
}

// The ConfigMap sets the flags the command line did not give, over their
// environment and defaults; the command line wins.
func TestTheConfigMapSetsWhatTheCommandLineDidNot(t *testing.T) {
	t.Setenv("VKO_CLUSTER_NAME", "from-env")
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	f := bindFlags(fs)
	if err := fs.Parse([]string{"--max-backoff=30s"}); err != nil {
		t.Fatal(err)
	}
	cs := settingsOf(map[string]string{"max-backoff": "1m", "max-concurrent-reconciles": "3", "cluster-name": "eu-1", "zap-log-level": "debug"})
	set, err := applySettings(context.Background(), cs, fs, "vko")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cluster-name", "max-concurrent-reconciles", "zap-log-level"}; !slices.Equal(set, want) {
		t.Errorf("set %v, want %v", set, want)
	}
	if f.maxBackoff != 30*time.Second || f.maxConcurrent != 3 || f.clusterName != "eu-1" {
		t.Errorf("max-backoff %s (the command line's), max-concurrent-reconciles %d, cluster-name %q (the ConfigMap's over VKO_CLUSTER_NAME)", f.maxBackoff, f.maxConcurrent, f.clusterName)
	}
	// No ConfigMap, or no namespace: nothing changes.
	if set, err := applySettings(context.Background(), fake.NewClientset(), fs, "vko"); err != nil || len(set) > 0 {
		t.Errorf("without the ConfigMap: %v, %v", set, err)
	}
	if set, err := applySettings(context.Background(), cs, fs, ""); err != nil || len(set) > 0 {
		t.Errorf("without a namespace: %v, %v", set, err)
	}
}

// A key that is no flag, one that cannot be set there, or a value its flag
// refuses fails the start, naming each key and the rule.
func TestABadSettingNamesItsKey(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	bindFlags(fs)
	_, err := applySettings(context.Background(), settingsOf(map[string]string{
		"max-concurent-reconciles": "3", "operator-namespace": "elsewhere", "shards": "3"}), fs, "vko")
	for _, want := range []string{`ConfigMap vko/vault-keycloak-operator-settings`, `key "max-concurent-reconciles" is no flag of the manager`,
		`key "operator-namespace" cannot be set here`, `key "shards" cannot be set here: every replica reads this ConfigMap`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
	_, err = applySettings(context.Background(), settingsOf(map[string]string{"max-backoff": "soon"}), fs, "vko")
	if err == nil || !strings.Contains(err.Error(), `key "max-backoff": "soon" is not a value of --max-backoff`) {
		t.Errorf("a value the flag refuses: %v", err)
	}
}
