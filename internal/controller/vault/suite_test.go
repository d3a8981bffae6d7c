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

package vault_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/internal/operator"
	vaultclient "github.com/carbogame/vault-keycloak-operator/internal/vault"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

var (
	// op is the control plane with the manager and webhooks running.
	op *harness.Operator
	// vaultServer is this suite's own Vault: the outage test stops and
	// restarts it, which a Vault shared with other packages would not allow.
	vaultServer *harness.Vault
	// admin is a Vault client with the root token, standing for the
	// Vault administrator and for the checks of the tests.
	admin *vaultapi.Client
	// clientset reaches the API server for what the controller-runtime
	// client does not do (TokenRequest).
	clientset *kubernetes.Clientset
)

// testMaxBackoff keeps recovery after an outage quick in tests.
const testMaxBackoff = 2 * time.Second

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	logDir, err := os.MkdirTemp("", "vko-vault-suite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if vaultServer, err = harness.StartVault(ctx, logDir); err != nil {
		fmt.Fprintln(os.Stderr, "start Vault:", err)
		return 1
	}
	defer vaultServer.Stop()

	cfg := vaultclient.ConfigFromEnv()
	cfg.Address, cfg.Token = vaultServer.Addr, vaultServer.Token
	if op, err = harness.StartOperator(operator.Options{Vault: cfg, MaxBackoff: testMaxBackoff}); err != nil {
		fmt.Fprintln(os.Stderr, "start operator:", err)
		return 1
	}
	defer op.Stop()
	if clientset, err = kubernetes.NewForConfig(op.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	apiCfg := vaultapi.DefaultConfig()
	apiCfg.Address = vaultServer.Addr
	if admin, err = vaultapi.NewClient(apiCfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	admin.SetToken(vaultServer.Token)
	if err := prepareVault(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "prepare Vault:", err)
		return 1
	}
	return m.Run()
}

// prepareVault does what a Vault administrator does once: enable the
// Kubernetes auth method and point it at the cluster's API server, with a
// reviewer ServiceAccount allowed to call TokenReview. It is run again after
// the outage test restarts the (empty) dev server.
func prepareVault(ctx context.Context) error {
	auths, err := admin.Sys().ListAuthWithContext(ctx)
	if err != nil {
		return err
	}
	if _, ok := auths["kubernetes/"]; !ok {
		if err := admin.Sys().EnableAuthWithOptionsWithContext(ctx, "kubernetes", &vaultapi.EnableAuthOptions{Type: "kubernetes"}); err != nil {
			return fmt.Errorf("enable kubernetes auth: %w", err)
		}
	}
	const ns, sa = "vault-system", "vault-reviewer"
	if err := createIgnoreExists(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	if err := createIgnoreExists(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}); err != nil {
		return err
	}
	if err := createIgnoreExists(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "vault-reviewer-auth-delegator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	}); err != nil {
		return err
	}
	reviewer, err := serviceAccountToken(ctx, ns, sa)
	if err != nil {
		return err
	}
	_, err = admin.Logical().WriteWithContext(ctx, "auth/kubernetes/config", map[string]any{
		"kubernetes_host":      op.Config.Host,
		"kubernetes_ca_cert":   string(op.Config.CAData),
		"token_reviewer_jwt":   reviewer,
		"disable_local_ca_jwt": true,
	})
	if err != nil {
		return fmt.Errorf("configure kubernetes auth: %w", err)
	}
	return nil
}

func createIgnoreExists(ctx context.Context, obj client.Object) error {
	if err := op.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// serviceAccountToken asks the API server for a token of the ServiceAccount,
// as the kubelet does for a pod.
func serviceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	tr, err := clientset.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token for %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

func ptr[T any](v T) *T { return &v }
