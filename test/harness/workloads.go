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

package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workloads runs what makes workloads roll out on an API server with no
// container runtime: kube-controller-manager's workload controllers,
// kube-scheduler, and kwok faking a Node whose pods become Ready at once.
type Workloads struct {
	procs []*Process
}

// StartWorkloads starts them against the API server of kubeconfig, and
// adds the Node (c is an admin client of that API server).
func StartWorkloads(ctx context.Context, c client.Client, kubeconfig, logDir string) (*Workloads, error) {
	if err := requireFile(os.Getenv(EnvKubeDir), "workload controllers", EnvKubeDir); err != nil {
		return nil, err
	}
	if err := requireFile(os.Getenv(EnvKwokBin), "kwok", EnvKwokBin); err != nil {
		return nil, err
	}
	procs, err := startWorkloadProcesses(kubeconfig, logDir, "deployment,replicaset,statefulset,daemonset")
	w := &Workloads{procs: procs}
	if err != nil {
		w.Stop()
		return nil, err
	}
	if err := AddKwokNode(ctx, c); err != nil {
		w.Stop()
		return nil, err
	}
	return w, nil
}

// Stop ends the processes.
func (w *Workloads) Stop() {
	for i := len(w.procs) - 1; i >= 0; i-- {
		w.procs[i].Stop()
	}
}

// startWorkloadProcesses starts kube-controller-manager (with controllers),
// kube-scheduler and kwok; on failure it returns those it started.
func startWorkloadProcesses(kubeconfig, logDir, controllers string) ([]*Process, error) {
	kube, kwokBin := os.Getenv(EnvKubeDir), os.Getenv(EnvKwokBin)
	kwokStages, err := moduleDir("kwok", "sigs.k8s.io/kwok")
	if err != nil {
		return nil, err
	}
	stage := func(parts ...string) string {
		return "--config=" + filepath.Join(append([]string{kwokStages, "kustomize", "stage"}, parts...)...)
	}
	var procs []*Process
	for _, p := range []struct {
		name, bin string
		args      []string
	}{
		{"kube-controller-manager", filepath.Join(kube, "kube-controller-manager"), []string{
			"--kubeconfig=" + kubeconfig, "--controllers=" + controllers,
			"--leader-elect=false", "--use-service-account-credentials=false", "--secure-port=0"}},
		{"kube-scheduler", filepath.Join(kube, "kube-scheduler"), []string{
			"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0"}},
		{"kwok", kwokBin, []string{
			"--kubeconfig=" + kubeconfig, "--manage-all-nodes=true", "--cidr=" + PodCIDR,
			stage("node", "fast", "node-initialize.yaml"), stage("node", "heartbeat", "node-heartbeat.yaml"),
			stage("pod", "fast", "pod-ready.yaml"), stage("pod", "fast", "pod-complete.yaml"), stage("pod", "fast", "pod-delete.yaml")}},
	} {
		proc, err := start(p.name, logDir, nil, p.bin, p.args...)
		if err != nil {
			return procs, err
		}
		procs = append(procs, proc)
	}
	return procs, nil
}

// AddKwokNode creates the one fake Node kwok manages, and clears the
// not-ready taint the API server's admission puts on a new Node.
func AddKwokNode(ctx context.Context, c client.Client) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-0",
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": "kwok-node-0", "type": "kwok"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("create the kwok Node: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err == nil && nodeReady(node) {
			node.Spec.Taints = nil
			if err := c.Update(ctx, node); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready after a minute: %+v", node.Name, node.Status.Conditions)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
