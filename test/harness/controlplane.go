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
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControlPlane is a local kube-apiserver and etcd (the binaries
// KUBEBUILDER_ASSETS points at) with the operator's CRDs installed.
type ControlPlane struct {
	Env        *envtest.Environment
	Config     *rest.Config
	Kubeconfig string
}

// StartControlPlane starts the API server and etcd, installs the CRDs found
// under crdDir, and writes an admin kubeconfig into dir.
func StartControlPlane(crdDir, dir string) (*ControlPlane, error) {
	if err := requireFile(os.Getenv("KUBEBUILDER_ASSETS"), "control plane", "KUBEBUILDER_ASSETS"); err != nil {
		return nil, err
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	cp := &ControlPlane{Env: env, Config: cfg}
	if cp.Kubeconfig, err = writeAdminKubeconfig(env, dir); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

// Stop ends the API server and etcd.
func (cp *ControlPlane) Stop() { _ = cp.Env.Stop() }

// writeAdminKubeconfig adds a system:masters user to the control plane and
// writes its kubeconfig into dir.
func writeAdminKubeconfig(env *envtest.Environment, dir string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("add admin user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("render kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, kubeconfig, 0o600)
}
