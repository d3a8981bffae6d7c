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
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// Sample is one file of config/samples, with the condition that says it works.
type Sample struct {
	File, Kind, Group, Version, Name, Condition string
	Namespaced                                  bool
}

// SamplesNamespace is where the namespaced samples are applied.
const SamplesNamespace = "default"

const (
	vaultGroup, secretsGroup = "vault.exemple.com", "secrets.carbogame.com"
	v1alpha1, v1beta1        = "v1alpha1", "v1beta1"
	ready, connected         = "Ready", "Connected"
)

// Samples are config/samples: both groups, both versions.
var Samples = []Sample{
	{"vault_v1beta1_vaultapp.yaml", "VaultApp", vaultGroup, v1beta1, "shop-api", ready, true},
	{"vault_v1alpha1_vaultapp.yaml", "VaultApp", vaultGroup, v1alpha1, "legacy-api", ready, true},
	{"secrets_v1beta1_keycloakserver.yaml", "KeycloakServer", secretsGroup, v1beta1, "prod-keycloak", connected, false},
	{"secrets_v1alpha1_keycloakserver.yaml", "KeycloakServer", secretsGroup, v1alpha1, "legacy-keycloak", connected, false},
	{"secrets_v1beta1_keycloakclientcredential.yaml", "KeycloakClientCredential", secretsGroup, v1beta1, "gitea", ready, true},
	{"secrets_v1alpha1_keycloakclientcredential.yaml", "KeycloakClientCredential", secretsGroup, v1alpha1, "gitea-legacy", ready, true},
}

// Key is where the sample lives once applied.
func (s Sample) Key() client.ObjectKey {
	if s.Namespaced {
		return client.ObjectKey{Namespace: SamplesNamespace, Name: s.Name}
	}
	return client.ObjectKey{Name: s.Name}
}

// Get reads the sample in the given version of its group.
func (s Sample) Get(ctx context.Context, c client.Client, version string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: s.Group, Version: version, Kind: s.Kind})
	if err := c.Get(ctx, s.Key(), obj); err != nil {
		return nil, fmt.Errorf("get %s %s/%s %s: %w", s.Kind, s.Group, version, s.Name, err)
	}
	return obj, nil
}

// WaitReady waits until the sample's condition is True and describes the
// conditions it last saw when it is not.
func (s Sample) WaitReady(ctx context.Context, c client.Client, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last []metav1.Condition
	for {
		if obj, err := s.Get(ctx, c, s.Version); err == nil {
			var status struct {
				Conditions []metav1.Condition `json:"conditions"`
			}
			if raw, ok := obj.Object["status"].(map[string]any); ok {
				_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status)
			}
			last = status.Conditions
			if meta.IsStatusConditionTrue(last, s.Condition) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s/%s %s: %s not True within %s; conditions %+v", s.Kind, s.Group, s.Version, s.Name, s.Condition, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// RenderSamples copies config/samples into a new directory under parent,
// pointed at this Keycloak, with further old, new pairs replaced.
func RenderSamples(parent, keycloakURL string, replace ...string) (string, error) {
	dir, err := os.MkdirTemp(parent, "samples-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(RepoRoot(), "config", "samples")
	replace = append([]string{"http://127.0.0.1:8080", keycloakURL}, replace...)
	for _, s := range Samples {
		data, err := os.ReadFile(filepath.Join(src, s.File))
		if err != nil {
			return "", err
		}
		for i := 0; i+1 < len(replace); i += 2 {
			data = bytes.ReplaceAll(data, []byte(replace[i]), []byte(replace[i+1]))
		}
		if err := os.WriteFile(filepath.Join(dir, s.File), data, 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// AdminSetup does what the Vault and Keycloak administrators do once,
// as the README describes: Vault's Kubernetes auth pointed at the API
// server; realm "operator" with the client "gitea" the samples name; an
// operator client in realm master whose credentials go into the Secret
// prod-keycloak-credentials in the operator's namespace.
func AdminSetup(ctx context.Context, c client.Client, cfg *rest.Config, vault *Vault, keycloak *Keycloak, operatorNamespace, operatorClientID string) error {
	if err := vault.ConfigureKubernetesAuth(ctx, c, cfg); err != nil {
		return err
	}
	a, err := keycloak.Admin(ctx)
	if err != nil {
		return err
	}
	if err := a.CreateRealm(ctx, "operator"); err != nil {
		return err
	}
	if err := a.CreateClient(ctx, "operator", "gitea", ""); err != nil {
		return err
	}
	secret, err := a.CreateOperatorClient(ctx, operatorClientID, "operator")
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "prod-keycloak-credentials", Namespace: operatorNamespace},
			StringData: map[string]string{"clientId": operatorClientID, "clientSecret": secret}},
	} {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// VaultServerSample is config/samples' VaultServer: the default server,
// granting the samples' namespace what the VaultApp samples ask.
const VaultServerSample = "central-vault"

// RenderVaultServerSample writes config/samples' VaultServer, pointed at
// this Vault, into dir, and returns the file.
func RenderVaultServerSample(dir, vaultAddr string) (string, error) {
	sample, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "samples", "vault_v1beta1_vaultserver.yaml"))
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "vaultserver.yaml")
	return file, os.WriteFile(file, bytes.ReplaceAll(sample, []byte("http://127.0.0.1:8200"), []byte(vaultAddr)), 0o600)
}

// WaitVaultServerConnected waits until the operator has logged in to the
// VaultServer, and returns how long that took. It reads the VaultServer
// unstructured, so that any client will do, whatever its scheme.
func WaitVaultServerConnected(ctx context.Context, c client.Reader, name string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	var last error
	for {
		s := &unstructured.Unstructured{}
		s.SetGroupVersionKind(vaultv1beta1.GroupVersion.WithKind("VaultServer"))
		if last = c.Get(ctx, client.ObjectKey{Name: name}, s); last == nil {
			conditions, _, _ := unstructured.NestedSlice(s.Object, "status", "conditions")
			for _, raw := range conditions {
				if c, ok := raw.(map[string]any); ok && c["type"] == "Connected" && c["status"] == "True" {
					return time.Since(start), nil
				}
			}
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("VaultServer %s not Connected within %s (last read: %v)", name, timeout, last)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
