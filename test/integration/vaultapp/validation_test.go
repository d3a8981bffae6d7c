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

package vaultapp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// TestAdmissionRejectsWhatTheNamespaceMayNotHave sends each rule's offending
// input through the real API server and its webhooks, and checks the exact
// message the user sees: it names the field and the rule.
func TestAdmissionRejectsWhatTheNamespaceMayNotHave(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, nil)
	denied := func(msg string) string {
		return `admission webhook "vvaultapp-v1beta1.vault.exemple.com" denied the request: VaultApp.vault.exemple.com "bad" is invalid: ` + msg
	}
	grants := fmt.Sprintf(`not allowed in namespace %q: it may use read, list (the cluster admin sets this in the namespace's vault.exemple.com/allowed-capabilities annotation)`, ns)

	cases := []struct {
		name   string
		mutate func(*vaultv1beta1.VaultApp)
		want   string
	}{
		{"absolute path", func(a *vaultv1beta1.VaultApp) { a.Spec.Policy.Rules[0].Path = "/etc/passwd" },
			denied(`spec.policy.rules[0].path: Invalid value: "/etc/passwd": must be relative to the namespace's prefix: no leading "/"`)},
		{"path escaping the prefix", func(a *vaultv1beta1.VaultApp) { a.Spec.Policy.Rules[0].Path = "db/../../other/db" },
			denied(`spec.policy.rules[0].path: Invalid value: "db/../../other/db": must stay inside the namespace's prefix: no "." or ".." segment`)},
		{"glob not at the end", func(a *vaultv1beta1.VaultApp) { a.Spec.Policy.Rules[0].Path = "*/db" },
			denied(`spec.policy.rules[0].path: Invalid value: "*/db": may use "*" only as its last character (Vault's glob)`)},
		{"empty segment", func(a *vaultv1beta1.VaultApp) { a.Spec.Policy.Rules[0].Path = "db//x" },
			denied(`spec.policy.rules[0].path: Invalid value: "db//x": may hold only letters, digits, "_", ".", "-", "+" and "*", in segments separated by single "/"`)},
		{"capability not granted", func(a *vaultv1beta1.VaultApp) {
			a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "create", "delete"}
		}, denied(`spec.policy.rules[0].capabilities: Forbidden: create, delete ` + grants)},
		{"invalid ServiceAccount", func(a *vaultv1beta1.VaultApp) { a.Spec.KubernetesAuth.ServiceAccounts = []string{"Shop_API"} },
			denied(`spec.kubernetesAuth.serviceAccounts[0]: Invalid value: "Shop_API": must be a ServiceAccount name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		{"token TTL too long", func(a *vaultv1beta1.VaultApp) {
			a.Spec.KubernetesAuth.TokenTTL = &metav1.Duration{Duration: 48 * 3600e9}
		},
			denied(`spec.kubernetesAuth.tokenTTL: Invalid value: "48h0m0s": must be between 1m0s and 24h0m0s`)},
		{"refresh too often", func(a *vaultv1beta1.VaultApp) { a.Spec.RefreshInterval = &metav1.Duration{Duration: 5e9} },
			denied(`spec.refreshInterval: Invalid value: "5s": must be at least 30s`)},
		// sudo and root are not even in the schema: the API server refuses them first.
		{"sudo", func(a *vaultv1beta1.VaultApp) {
			a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"sudo"}
		},
			`VaultApp.vault.exemple.com "bad" is invalid: spec.policy.rules[0].capabilities[0]: Unsupported value: "sudo": supported values: "create", "read", "update", "patch", "delete", "list"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := shopAPI(ns)
			app.Name = "bad"
			tc.mutate(app)
			err := op.Client.Create(ctx, app)
			if err == nil {
				t.Fatal("created; want it rejected")
			}
			if err.Error() != tc.want {
				t.Fatalf("message:\n%s\nwant:\n%s", err, tc.want)
			}
		})
	}

	// A v1alpha1 author is told about the v1alpha1 fields.
	t.Run("v1alpha1 preset not granted", func(t *testing.T) {
		alpha := &vaultv1alpha1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
			Spec:       vaultv1alpha1.VaultAppSpec{VaultPolicy: vaultv1alpha1.PresetReadWrite, SecretPaths: []string{"db", "../x"}},
		}
		err := op.Client.Create(ctx, alpha)
		want := denied(`[spec.secretPaths[1]: Invalid value: "../x": must stay inside the namespace's prefix: no "." or ".." segment, spec.vaultPolicy: Forbidden: create, update, patch, delete ` + grants + `]`)
		if err == nil || err.Error() != want {
			t.Fatalf("message:\n%v\nwant:\n%s", err, want)
		}
	})

	// A preset v1alpha1 does not know is refused by name, not quietly made
	// "read": the API server converts the request for the mutating webhook
	// before it checks the schema's enum.
	t.Run("v1alpha1 unknown preset", func(t *testing.T) {
		alpha := &vaultv1alpha1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
			Spec:       vaultv1alpha1.VaultAppSpec{VaultPolicy: "ReadWrite", SecretPaths: []string{"db"}},
		}
		err := op.Client.Create(ctx, alpha)
		const want = `spec.vaultPolicy: Unsupported value: "ReadWrite": supported values: "read", "read-write"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("message:\n%v\nwant it to hold:\n%s", err, want)
		}
		if err := op.Client.Get(ctx, client.ObjectKeyFromObject(alpha), alpha); !apierrors.IsNotFound(err) {
			t.Fatalf("get after the refusal: %v, want NotFound", err)
		}
	})

	// What the admin grants, the namespace may use.
	t.Run("granted by the namespace annotation", func(t *testing.T) {
		writer := newNamespace(t, map[string]string{"vault.exemple.com/allowed-capabilities": "read, list, create, sudo"})
		app := shopAPI(writer)
		app.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "create"}
		if err := op.Client.Create(ctx, app); err != nil {
			t.Fatalf("rejected although granted: %v", err)
		}
		var got vaultv1beta1.VaultApp
		if err := op.Client.Get(ctx, client.ObjectKeyFromObject(app), &got); err != nil {
			t.Fatal(err)
		}
	})
}
