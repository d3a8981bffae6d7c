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

package tenancy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	vaultcontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/rollout"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// attempt is one way a tenant may try to get more than it was granted.
type attempt struct {
	name string
	// try acts as the tenant and returns the API server's answer.
	try func(t *testing.T) error
	// refused is the message the tenant must get (the field and the rule);
	// "" when the API accepts the request and it must be inert instead.
	refused string
	// inert checks Vault, Keycloak and the Secrets: nothing beyond the
	// grant happened. It runs for refused attempts too.
	inert func(t *testing.T)
}

// TestTenantCannotEscalate is the list: add a row for every new path.
func TestTenantCannotEscalate(t *testing.T) {
	ctx := context.Background()
	create := func(o client.Object) func(*testing.T) error {
		return func(*testing.T) error { return tenant.Create(ctx, o) }
	}
	kccDenied := func(name, msg string) string {
		return `admission webhook "vkeycloakclientcredential-v1beta1.secrets.carbogame.com" denied the request: KeycloakClientCredential.secrets.carbogame.com "` + name + `" is invalid: ` + msg
	}
	appDenied := func(name, msg string) string {
		return `admission webhook "vvaultapp-v1beta1.vault.exemple.com" denied the request: VaultApp.vault.exemple.com "` + name + `" is invalid: ` + msg
	}
	rotatingTeamAWeb := func(ns, name string) *secretsv1beta1.KeycloakClientCredential {
		k := credential(ns, name, appsRealm, "team-a-web")
		k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
		return k
	}
	var askedBefore string // team-a-web's secret before a refused rotation request
	grantsMsg := fmt.Sprintf(`not allowed in namespace %q: it may use read, list (the cluster admin sets this in the namespace's vault.exemple.com/allowed-capabilities annotation)`, own)

	// ownServer is a VaultServer that grants the tenant's namespace read and
	// list on its KV prefix, tokens of up to an hour, and no Retain.
	ownServer := func(t *testing.T) string {
		name := "own-vault-" + own
		s := &vaultv1beta1.VaultServer{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: vaultv1beta1.VaultServerSpec{
				Address: "https://vault.example.com",
				Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "r"}},
				AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
				Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{own}, MaxTokenTTL: &metav1.Duration{Duration: time.Hour},
					Paths: []vaultv1beta1.VaultPathGrant{{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}}}},
			}}
		if err := op.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		return name
	}

	attempts := []attempt{
		// VaultServers are the admin's alone: the shipped editor roles
		// give a tenant no right on them, not even to read the grants.
		{name: "create a VaultServer", try: create(&vaultv1beta1.VaultServer{
			ObjectMeta: metav1.ObjectMeta{Name: "tenant-vault"},
			Spec: vaultv1beta1.VaultServerSpec{
				Address: "https://vault.example.com",
				Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "r"}},
				AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
				Access:  []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"*"}, Paths: []vaultv1beta1.VaultPathGrant{{Template: "secret/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}},
			}}),
			refused: `vaultservers.vault.exemple.com is forbidden: User "` + tenantUser + `" cannot create resource "vaultservers" in API group "vault.exemple.com" at the cluster scope`},
		// A VaultServer's entries are the whole grant on it: the KV rules,
		// the token TTL and Retain, whatever the namespace's annotations say.
		{name: "ask a VaultServer for a KV capability its entries do not grant", try: func(t *testing.T) error {
			a := vaultApp(own, "v-kv")
			a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: ownServer(t)}
			a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "update"}
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-kv", fmt.Sprintf(`spec.policy.rules[0].capabilities: Forbidden: update on "db/*" (secret/data/%[1]s/db/*) not granted to namespace %[1]q by VaultServer "own-vault-%[1]s": it grants read, list on secret/data/%[1]s/*`, own))},
		{name: "ask a VaultServer for tokens longer than its maxTokenTTL", try: func(t *testing.T) error {
			a := vaultApp(own, "v-ttl")
			a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: ownServer(t)}
			a.Spec.KubernetesAuth.TokenTTL = &metav1.Duration{Duration: 2 * time.Hour}
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-ttl", fmt.Sprintf(`spec.kubernetesAuth.tokenTTL: Forbidden: 2h0m0s is over the 1h0m0s VaultServer "own-vault-%[1]s" allows namespace %[1]q (maxTokenTTL in its spec.access)`, own))},
		{name: "Retain on a VaultServer without allowRetain", try: func(t *testing.T) error {
			a := vaultApp(own, "v-retain")
			a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: ownServer(t)}
			a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-retain", fmt.Sprintf(`spec.deletionPolicy: Forbidden: Retain not allowed in namespace %[1]q by VaultServer "own-vault-%[1]s"`, own))},
		{name: "ask Vault's own paths outside the KV prefix", try: func(t *testing.T) error {
			a := vaultApp(own, "v-sys")
			a.Spec.Policy.VaultPaths = []vaultv1beta1.VaultPathRule{{Path: "sys/policies/acl/app.x", Capabilities: []vaultv1beta1.Capability{"update"}}}
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-sys", `spec.policy.vaultPaths[0].path: Forbidden: paths under sys/ are never granted to namespaces`)},
		{name: "ask a path outside the KV prefix without a VaultServer", try: func(t *testing.T) error {
			a := vaultApp(own, "v-db")
			a.Spec.Policy.VaultPaths = []vaultv1beta1.VaultPathRule{{Path: "database/creds/" + own, Capabilities: []vaultv1beta1.Capability{"read"}}}
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-db", `spec.policy.vaultPaths[0].path: Forbidden: only a VaultServer's spec.access grants paths outside the namespace's KV prefix`)},
		{name: "widen a VaultServer's grants", try: func(t *testing.T) error {
			patch := []byte(`{"spec":{"access":[{"namespaces":["*"],"paths":[{"template":"secret/*","capabilities":["read"]}]}]}}`)
			return tenant.Patch(ctx, &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: ownServer(t)}}, client.RawPatch(types.MergePatchType, patch))
		}, refused: fmt.Sprintf(`vaultservers.vault.exemple.com "own-vault-%s" is forbidden: User "%s" cannot patch resource "vaultservers" in API group "vault.exemple.com" at the cluster scope`, own, tenantUser)},
		{name: "read the VaultServers' grants", try: func(*testing.T) error { return tenant.List(ctx, &vaultv1beta1.VaultServerList{}) },
			refused: `vaultservers.vault.exemple.com is forbidden: User "` + tenantUser + `" cannot list resource "vaultservers" in API group "vault.exemple.com" at the cluster scope`},
		// Keycloak: realms, clients and rotation outside the grants.
		{name: "read a realm not granted", try: create(credential(own, "k-realm", "other-realm", "team-a-web")),
			refused: kccDenied("k-realm", fmt.Sprintf(`spec.source.realm: Forbidden: realm "other-realm" is not granted to namespace %q by KeycloakServer %q: its grants for this namespace allow realms %s, master`, own, server, appsRealm)),
		},
		{name: "read another team's client", try: create(credential(own, "k-other", appsRealm, "team-b-web")),
			refused: kccDenied("k-other", fmt.Sprintf(`spec.source.clientId: Forbidden: client "team-b-web" in realm %q is not granted to namespace %q by KeycloakServer %q: its grants allow clientIds team-a-web, team-a-rot, team-a-narrow`, appsRealm, own, server)),
		},
		{name: "read the operator's own login client", try: create(credential(own, "k-login", "master", operatorClientID)),
			refused: kccDenied("k-login", fmt.Sprintf(`spec.source.clientId: Forbidden: client %q in realm "master" is the operator's own login client: it is never readable or rotatable through a KeycloakClientCredential`, operatorClientID))},
		{name: "rotate the operator's own login client", try: func(t *testing.T) error {
			k := credential(own, "k-login-rot", "master", operatorClientID)
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
			return tenant.Create(ctx, k)
		}, refused: kccDenied("k-login-rot", fmt.Sprintf(`spec.source.clientId: Forbidden: client %q in realm "master" is the operator's own login client`, operatorClientID))},
		{name: "read admin-cli", try: create(credential(own, "k-admin-cli", "master", "admin-cli")),
			refused: kccDenied("k-admin-cli", `spec.source.clientId: Forbidden: client "admin-cli" in realm "master" is one of Keycloak's admin clients: it is never readable or rotatable through a KeycloakClientCredential`)},
		{name: "read a realm's admin client in master", try: create(credential(own, "k-master-realm", "master", appsRealm+"-realm")),
			refused: kccDenied("k-master-realm", fmt.Sprintf(`spec.source.clientId: Forbidden: client "%s-realm" in realm "master" is an admin client of the master realm`, appsRealm))},
		{name: "rotate without the rotate grant", try: create(rotatingTeamAWeb(own, "k-rotate")),
			refused: kccDenied("k-rotate", fmt.Sprintf(`spec.rotation: Forbidden: rotating client "team-a-web" is not granted to namespace %q by KeycloakServer %q: no grant that covers it sets rotate: true`, own, server))},
		{name: "ask for a rotation now without the rotate grant", try: func(t *testing.T) error {
			k := credential(own, "k-ask-rot", appsRealm, "team-a-web")
			if err := tenant.Create(ctx, k); err != nil {
				t.Fatal(err)
			}
			waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
			return update(ctx, k, func() {
				k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"}
			})
		}, refused: kccDenied("k-ask-rot", fmt.Sprintf(`metadata.annotations[secrets.carbogame.com/rotation-request]: Forbidden: rotating client "team-a-web" is not granted to namespace %q by KeycloakServer %q: no grant that covers it sets rotate: true`, own, server))},
		{name: "a realm that is a path", try: create(credential(own, "k-path", "apps/../master", "team-a-web")),
			refused: kccDenied("k-path", `spec.source.realm: Invalid value: "apps/../master": must be a plain realm name`)},
		{name: "v1alpha1: another team's client", try: create(&secretsv1alpha1.KeycloakClientCredential{
			ObjectMeta: metav1.ObjectMeta{Name: "k-alpha", Namespace: own},
			Spec: secretsv1alpha1.KeycloakClientCredentialSpec{
				Source: secretsv1alpha1.Source{KeycloakServer: server, Realm: appsRealm, ClientID: "team-b-web"},
				Target: secretsv1alpha1.Target{SecretName: "k-alpha-creds"},
			}}),
			refused: kccDenied("k-alpha", `spec.source.clientId: Forbidden: client "team-b-web"`)},
		{name: "v1alpha1: rotation smuggled in the conversion annotation", try: func(t *testing.T) error {
			hub := rotatingTeamAWeb(own, "k-smuggle")
			alpha := &secretsv1alpha1.KeycloakClientCredential{}
			if err := alpha.ConvertFrom(hub); err != nil {
				t.Fatal(err)
			}
			if alpha.Annotations[secretsv1alpha1.ConversionDataAnnotation] == "" {
				t.Fatal("rotation did not need the annotation: the row no longer tests the path")
			}
			alpha.ResourceVersion = ""
			return tenant.Create(ctx, alpha)
		}, refused: kccDenied("k-smuggle", `spec.rotation: Forbidden: rotating client "team-a-web" is not granted`)},
		{name: "switch a granted resource to another team's client", try: func(t *testing.T) error {
			k := credential(own, "k-switch", appsRealm, "team-a-web")
			if err := tenant.Create(ctx, k); err != nil {
				t.Fatal(err)
			}
			waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
			return update(ctx, k, func() { k.Spec.Source.ClientID = "team-b-web" })
		}, refused: kccDenied("k-switch", `spec.source.clientId: Forbidden: client "team-b-web"`),
			inert: func(t *testing.T) {
				var s corev1.Secret
				if err := op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: "k-switch-creds"}, &s); err != nil {
					t.Fatal(err)
				}
				if string(s.Data["secret"]) != keycloakSecret(t, appsRealm, "team-a-web") || string(s.Data["id"]) != "team-a-web" {
					t.Fatal("the Secret no longer holds the granted client's secret")
				}
			}},
		// A rotation's consumers: a workload named that lives in a namespace
		// that does not take the Secret, and one of her own that does not
		// read it, are never restarted (the rotation goes ahead without
		// grace: the realm keeps no previous secret).
		{name: "restart workloads that are not the rotation's consumers", try: func(t *testing.T) error {
			for _, d := range []*appsv1.Deployment{harness.ConsumerDeployment(victim, "victim-api", "k-consumers-creds", 0), harness.ConsumerDeployment(own, "bystander", "other-secret", 0)} {
				if err := op.Client.Create(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			k := credential(own, "k-consumers", appsRealm, "team-a-rot")
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{AcceptDowntime: true, Consumers: &secretsv1beta1.RotationConsumers{Workloads: []secretsv1beta1.WorkloadReference{
				{Kind: "Deployment", Name: "victim-api"}, {Kind: "Deployment", Name: "bystander"}}}}
			if err := tenant.Create(ctx, k); err != nil {
				return err
			}
			waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
			return update(ctx, k, func() { k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "consumers-1"} })
		}, inert: func(t *testing.T) {
			key := client.ObjectKey{Namespace: own, Name: "k-consumers"}
			NewWithT(t).Eventually(func() bool {
				var k secretsv1beta1.KeycloakClientCredential
				if err := op.Client.Get(ctx, key, &k); err != nil {
					return false
				}
				rot := k.Status.Rotation
				return rot != nil && rot.Phase == secretsv1beta1.RotationCompleted && rot.ConsumersDeadline != nil
			}).WithTimeout(settle).Should(BeTrue(), "the rotation's pass over its consumers never ran")
			op.WaitEvent(t, own, "k-consumers", secretsv1beta1.ReasonConsumerIgnored)
			for _, key := range []client.ObjectKey{{Namespace: victim, Name: "victim-api"}, {Namespace: own, Name: "bystander"}} {
				var d appsv1.Deployment
				if err := op.Client.Get(ctx, key, &d); err != nil {
					t.Fatal(err)
				}
				if _, restarted := d.Spec.Template.Annotations[rollout.RestartedAtAnnotation]; restarted {
					t.Fatalf("Deployment %s was restarted by another namespace's rotation", key)
				}
			}
		}},
		{name: "webhook down: another team's client", try: create(credential(bypass, "k-bypass", appsRealm, "team-b-web")),
			inert: func(t *testing.T) {
				k := waitCredential(t, client.ObjectKey{Namespace: bypass, Name: "k-bypass"}, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonAccessNotGranted)
				if msg := meta.FindStatusCondition(k.Status.Conditions, secretsv1beta1.TypeReady).Message; !strings.Contains(msg, `client "team-b-web" in realm`) {
					t.Fatalf("Ready message = %q", msg)
				}
				noSecret(t, bypass, "k-bypass-creds")
			}},
		{name: "webhook down: the operator's login client", try: create(credential(bypass, "k-bypass-login", "master", operatorClientID)),
			inert: func(t *testing.T) {
				waitCredential(t, client.ObjectKey{Namespace: bypass, Name: "k-bypass-login"}, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonAccessNotGranted)
				noSecret(t, bypass, "k-bypass-login-creds")
			}},
		{name: "webhook down: rotation without the grant, due", try: func(t *testing.T) error {
			return tenant.Create(ctx, rotatingTeamAWeb(bypass, "k-bypass-rot"))
		}, inert: func(t *testing.T) {
			before := keycloakSecret(t, appsRealm, "team-a-web")
			key := client.ObjectKey{Namespace: bypass, Name: "k-bypass-rot"}
			waitCredential(t, key, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonAccessNotGranted)
			// The last rotation "was" two hours ago (as the operator would
			// record it): one is due now, and must still not happen.
			var k secretsv1beta1.KeycloakClientCredential
			if err := op.Client.Get(ctx, key, &k); err != nil {
				t.Fatal(err)
			}
			k.Status.LastRotationTime = &metav1.Time{Time: time.Now().Add(-2 * time.Hour)}
			if err := op.Client.Status().Update(ctx, &k); err != nil {
				t.Fatal(err)
			}
			// A status write is not reconciled: a spec change is, and the
			// pass that follows finds the rotation due.
			if err := op.Client.Get(ctx, key, &k); err != nil {
				t.Fatal(err)
			}
			k.Spec.RefreshInterval = &metav1.Duration{Duration: 31 * time.Second}
			if err := op.Client.Update(ctx, &k); err != nil {
				t.Fatal(err)
			}
			NewWithT(t).Eventually(func() string {
				var now secretsv1beta1.KeycloakClientCredential
				if err := op.Client.Get(ctx, key, &now); err != nil {
					t.Fatal(err)
				}
				if c := meta.FindStatusCondition(now.Status.Conditions, secretsv1beta1.TypeReady); c != nil && c.ObservedGeneration == k.Generation {
					return c.Reason
				}
				return "not reconciled since the spec changed"
			}).WithTimeout(settle).Should(Equal(secretsv1beta1.ReasonAccessNotGranted), "the due rotation's pass never ran")
			NewWithT(t).Consistently(func() string { return keycloakSecret(t, appsRealm, "team-a-web") }).
				WithTimeout(3*time.Second).WithPolling(500*time.Millisecond).Should(Equal(before), "the secret was regenerated in Keycloak")
		}},
		{name: "webhook down: a rotation request without the grant", try: func(t *testing.T) error {
			askedBefore = keycloakSecret(t, appsRealm, "team-a-web")
			k := credential(bypass, "k-bypass-ask", appsRealm, "team-a-web")
			k.Annotations = map[string]string{secretsv1beta1.RotationRequestAnnotation: "r1"}
			return tenant.Create(ctx, k)
		}, inert: func(t *testing.T) {
			before := askedBefore
			key := client.ObjectKey{Namespace: bypass, Name: "k-bypass-ask"}
			// Synced as a plain read; the request handled once, refused.
			k := waitCredential(t, key, secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
			NewWithT(t).Eventually(func() string {
				if err := op.Client.Get(ctx, key, k); err != nil {
					t.Fatal(err)
				}
				return k.Status.LastRotationRequest
			}).WithTimeout(settle).Should(Equal("r1"), "the refused request was not recorded as handled")
			op.WaitEvent(t, bypass, "k-bypass-ask", secretsv1beta1.ReasonRotationRequestRefused)
			NewWithT(t).Consistently(func() string { return keycloakSecret(t, appsRealm, "team-a-web") }).
				WithTimeout(3*time.Second).WithPolling(500*time.Millisecond).Should(Equal(before), "the secret was regenerated in Keycloak")
		}},
		{name: "webhook down: a reserved label", try: func(t *testing.T) error {
			k := credential(bypass, "k-bypass-label", appsRealm, "team-a-web")
			k.Spec.Target.Labels = map[string]string{"secrets.carbogame.com/owner-namespace": victim}
			return tenant.Create(ctx, k)
		}, inert: func(t *testing.T) {
			waitCredential(t, client.ObjectKey{Namespace: bypass, Name: "k-bypass-label"}, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonNotAllowed)
			noSecret(t, bypass, "k-bypass-label-creds")
		}},
		{name: "webhook down: a ServiceAccount token Secret", try: func(t *testing.T) error {
			k := credential(bypass, "k-bypass-sa", appsRealm, "team-a-web")
			k.Spec.Target.Type = corev1.SecretTypeServiceAccountToken
			return tenant.Create(ctx, k)
		}, inert: func(t *testing.T) {
			waitCredential(t, client.ObjectKey{Namespace: bypass, Name: "k-bypass-sa"}, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonTargetNotAllowed)
			noSecret(t, bypass, "k-bypass-sa-creds")
		}},

		// Target Secrets: only the operator's own kind of object.
		{name: "target a ServiceAccount token Secret", try: func(t *testing.T) error {
			k := credential(own, "s-satoken", appsRealm, "team-a-web")
			k.Spec.Target.Type = corev1.SecretTypeServiceAccountToken
			return tenant.Create(ctx, k)
		}, refused: kccDenied("s-satoken", `spec.target.type: Forbidden: target 0: type "kubernetes.io/service-account-token" is managed by Kubernetes itself and is never written by the operator`)},
		{name: "a Secret type the namespace does not allow", try: func(t *testing.T) error {
			k := credential(own, "s-typed", appsRealm, "team-a-web")
			k.Spec.Target.Type = corev1.SecretTypeBasicAuth
			k.Spec.Target.Keys = secretsv1beta1.SecretKeys{ClientID: corev1.BasicAuthUsernameKey, ClientSecret: corev1.BasicAuthPasswordKey}
			return tenant.Create(ctx, k)
		}, refused: kccDenied("s-typed", fmt.Sprintf(`spec.target.type: Forbidden: target 0: namespace %s does not allow Secrets of type "kubernetes.io/basic-auth"`, own))},
		{name: "reserved labels and annotations", try: func(t *testing.T) error {
			k := credential(own, "s-reserved", appsRealm, "team-a-web")
			k.Spec.Target.Labels = map[string]string{"secrets.carbogame.com/owner-namespace": victim}
			k.Spec.Target.Annotations = map[string]string{"kubernetes.io/service-account.name": "default"}
			return tenant.Create(ctx, k)
		}, refused: kccDenied("s-reserved", `[spec.target.labels[secrets.carbogame.com/owner-namespace]: Forbidden: is reserved`)},
		{name: "write into another team's namespace", try: func(t *testing.T) error {
			k := credential(own, "s-victim", appsRealm, "team-a-web")
			k.Spec.Target.Namespaces = []string{victim}
			return tenant.Create(ctx, k)
		}, inert: func(t *testing.T) {
			waitCredential(t, client.ObjectKey{Namespace: own, Name: "s-victim"}, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonTargetNotAllowed)
			noSecret(t, victim, "s-victim-creds")
		}},
		{name: "overwrite a Secret the operator does not own", try: func(t *testing.T) error {
			if err := tenant.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s-foreign-creds", Namespace: own},
				StringData: map[string]string{"password": "hunter2"}}); err != nil {
				t.Fatal(err)
			}
			return tenant.Create(ctx, credential(own, "s-foreign", appsRealm, "team-a-web"))
		}, inert: func(t *testing.T) {
			waitCredential(t, client.ObjectKey{Namespace: own, Name: "s-foreign"}, secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonSecretNotOwned)
			var s corev1.Secret
			if err := op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: "s-foreign-creds"}, &s); err != nil {
				t.Fatal(err)
			}
			if len(s.Data) != 1 || string(s.Data["password"]) != "hunter2" {
				t.Fatalf("the foreign Secret was changed: keys %v", len(s.Data))
			}
		}},
		// The queueing side (a forged Secret queues nothing) is unit-tested
		// beside the mapper; this row checks the Secret is never touched.
		{name: "forged ownership labels", try: func(t *testing.T) error {
			// Another team's resource, which the forged Secret names.
			victimKcc := credential(victim, "victim", appsRealm, "team-b-web")
			if err := op.Client.Create(ctx, victimKcc); err != nil {
				t.Fatal(err)
			}
			waitCredential(t, client.ObjectKeyFromObject(victimKcc), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
			return tenant.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "victim-creds", Namespace: own, Labels: map[string]string{
					"app.kubernetes.io/managed-by": "vault-keycloak-operator", "secrets.carbogame.com/owner-namespace": victim, "secrets.carbogame.com/owner-name": "victim",
				}},
				StringData: map[string]string{"mine": "x"},
			})
		}, inert: func(t *testing.T) {
			// Neither written nor deleted by the victim's reconciles
			// (its refresh is 30s; deleting the victim resource prunes too).
			if err := op.Client.Delete(ctx, &secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "victim"}}); err != nil {
				t.Fatal(err)
			}
			NewWithT(t).Eventually(func() bool {
				return apierrors.IsNotFound(op.Client.Get(ctx, client.ObjectKey{Namespace: victim, Name: "victim"}, &secretsv1beta1.KeycloakClientCredential{}))
			}).WithTimeout(settle).Should(BeTrue())
			var s corev1.Secret
			if err := op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: "victim-creds"}, &s); err != nil {
				t.Fatalf("the forged Secret was deleted by the victim's cleanup: %v", err)
			}
			if len(s.Data) != 1 || string(s.Data["mine"]) != "x" {
				t.Fatal("the forged Secret was written to")
			}
		}},

		// Vault: capabilities, paths and lifetimes outside the grants.
		{name: "a capability not granted", try: create(vaultApp(own, "v-create", "read", "create")),
			refused: appDenied("v-create", `spec.policy.rules[0].capabilities: Forbidden: create `+grantsMsg),
			inert:   func(t *testing.T) { NewWithT(t).Expect(policy(t, policyName(own, "v-create"))).To(BeEmpty()) }},
		{name: "Retain without the admin's grant", try: func(t *testing.T) error {
			a := vaultApp(own, "v-retain")
			a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-retain", fmt.Sprintf(`spec.deletionPolicy: Forbidden: Retain not allowed in namespace %q: the cluster admin allows it with the namespace annotation vault.exemple.com/allow-retain=true`, own))},
		{name: "a path out of the namespace's prefix", try: func(t *testing.T) error {
			a := vaultApp(own, "v-escape")
			a.Spec.Policy.Rules[0].Path = "../" + victim + "/db"
			return tenant.Create(ctx, a)
		}, refused: appDenied("v-escape", fmt.Sprintf(`spec.policy.rules[0].path: Invalid value: "../%s/db": must stay inside the namespace's prefix: no "." or ".." segment`, victim))},
		{name: "v1alpha1: a preset not granted", try: create(&vaultv1alpha1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Name: "v-alpha", Namespace: own},
			Spec:       vaultv1alpha1.VaultAppSpec{VaultPolicy: vaultv1alpha1.PresetReadWrite, SecretPaths: []string{"db"}},
		}), refused: appDenied("v-alpha", `spec.vaultPolicy: Forbidden: create, update, patch, delete `+grantsMsg)},
		{name: "v1alpha1: capabilities smuggled in the conversion annotation", try: func(t *testing.T) error {
			return tenant.Create(ctx, alphaOf(t, vaultApp(own, "v-smuggle", "read", "delete")))
		}, refused: appDenied("v-smuggle", `spec.vaultPolicy: Forbidden: delete `+grantsMsg),
			inert: func(t *testing.T) { NewWithT(t).Expect(policy(t, policyName(own, "v-smuggle"))).To(BeEmpty()) }},
		{name: "v1alpha1: a v1beta1 schema bound skipped", try: func(t *testing.T) error {
			hub := vaultApp(own, "v-bounds")
			for range 64 {
				hub.Spec.Policy.Rules = append(hub.Spec.Policy.Rules, hub.Spec.Policy.Rules[0])
			}
			return tenant.Create(ctx, alphaOf(t, hub))
		}, refused: appDenied("v-bounds", `spec.policy.rules: Too many: 65: must have at most 64 items`)},
		{name: "v1alpha1: Retain smuggled in the conversion annotation", try: func(t *testing.T) error {
			hub := vaultApp(own, "v-smuggle-retain")
			hub.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
			alpha := alphaOf(t, hub)
			if alpha.Annotations[vaultv1alpha1.ConversionDataAnnotation] == "" {
				t.Fatal("Retain did not need the annotation: the row no longer tests the path")
			}
			return tenant.Create(ctx, alpha)
		}, refused: appDenied("v-smuggle-retain", `spec.deletionPolicy: Forbidden: Retain not allowed`)},
		{name: "switch to Retain after kubectl delete", try: func(t *testing.T) error {
			a := vaultApp(own, "v-late-retain")
			a.Finalizers = []string{"tenancy-test/hold"} // keeps it in deletion while the tenant edits it
			if err := tenant.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			a = waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
			if err := tenant.Delete(ctx, a); err != nil {
				t.Fatal(err)
			}
			return update(ctx, a, func() { a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain })
		}, refused: appDenied("v-late-retain", `spec: Forbidden: may not change while the VaultApp is being deleted`),
			inert: func(t *testing.T) {
				a := &vaultv1beta1.VaultApp{}
				key := client.ObjectKey{Namespace: own, Name: "v-late-retain"}
				NewWithT(t).Eventually(func() error {
					if err := tenant.Get(ctx, key, a); err != nil {
						return err
					}
					controllerutil.RemoveFinalizer(a, "tenancy-test/hold")
					return tenant.Update(ctx, a)
				}).WithTimeout(settle).Should(Succeed())
				NewWithT(t).Eventually(func() string { return policy(t, policyName(own, "v-late-retain")) }).WithTimeout(settle).Should(BeEmpty())
			}},
		// Whichever wins the race — the operator putting its finalizer back,
		// or the deletion — nothing may stay in Vault. TestOrphanIsSwept
		// proves the sweep itself.
		{name: "remove the operator's finalizer, then delete", try: func(t *testing.T) error {
			a := vaultApp(own, "v-orphan")
			if err := tenant.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
			// The operator may put it back at once: the tenant races it.
			if err := update(ctx, a, func() { controllerutil.RemoveFinalizer(a, vaultcontroller.Finalizer) }); err != nil {
				t.Fatal(err)
			}
			return tenant.Delete(ctx, a)
		}, inert: func(t *testing.T) {
			name := policyName(own, "v-orphan")
			NewWithT(t).Eventually(func() string { return policy(t, name) }).WithTimeout(settle).Should(BeEmpty(), "orphaned policy left in Vault")
			NewWithT(t).Eventually(func() map[string]any { return role(t, name) }).WithTimeout(settle).Should(BeNil(), "orphaned role left in Vault")
		}},
		{name: "adopt a Vault policy the operator did not write", try: func(t *testing.T) error {
			if err := vaultAdmin.Sys().PutPolicy(policyName(own, "v-foreign"), `path "secret/*" { capabilities = ["read"] }`); err != nil {
				t.Fatal(err)
			}
			return tenant.Create(ctx, vaultApp(own, "v-foreign"))
		}, inert: func(t *testing.T) {
			key := client.ObjectKey{Namespace: own, Name: "v-foreign"}
			a := waitApp(t, key, vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotOwned)
			if msg := meta.FindStatusCondition(a.Status.Conditions, vaultv1beta1.TypeReady).Message; !strings.Contains(msg, "policy "+policyName(own, "v-foreign")+" exists in Vault and was not written for this VaultApp") {
				t.Fatalf("Ready message = %q", msg)
			}
			if err := tenant.Delete(ctx, a); err != nil {
				t.Fatal(err)
			}
			NewWithT(t).Eventually(func() bool { return apierrors.IsNotFound(tenant.Get(ctx, key, a)) }).WithTimeout(settle).Should(BeTrue())
			if got := policy(t, policyName(own, "v-foreign")); got != `path "secret/*" { capabilities = ["read"] }` {
				t.Fatalf("the foreign policy was changed or removed: %q", got)
			}
		}},
		// Ownership falls back on the status; the shipped editor roles give
		// tenants no write on it.
		{name: "write the status that would make the operator adopt", try: func(t *testing.T) error {
			a := vaultApp(own, "v-status")
			if err := tenant.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{Type: vaultv1beta1.TypePolicySynced, Status: metav1.ConditionTrue, Reason: "Synced", Message: "forged"})
			return tenant.Status().Update(ctx, a)
		}, refused: fmt.Sprintf(`vaultapps.vault.exemple.com "v-status" is forbidden: User "%s" cannot update resource "vaultapps/status" in API group "vault.exemple.com" in the namespace "%s"`, tenantUser, own)},
		{name: "write a KeycloakClientCredential's status", try: func(t *testing.T) error {
			k := credential(own, "k-status", appsRealm, "team-a-web")
			if err := tenant.Create(ctx, k); err != nil {
				t.Fatal(err)
			}
			k.Status.Targets = []secretsv1beta1.TargetStatus{{Namespace: victim, Synced: true}}
			return tenant.Status().Update(ctx, k)
		}, refused: fmt.Sprintf(`keycloakclientcredentials.secrets.carbogame.com "k-status" is forbidden: User "%s" cannot update resource "keycloakclientcredentials/status" in API group "secrets.carbogame.com" in the namespace "%s"`, tenantUser, own)},
		{name: "webhook down: a path out of the namespace's prefix", try: func(t *testing.T) error {
			a := vaultApp(bypass, "v-bypass-escape")
			a.Spec.Policy.Rules[0].Path = "../" + victim + "/db"
			return tenant.Create(ctx, a)
		}, inert: func(t *testing.T) {
			waitApp(t, client.ObjectKey{Namespace: bypass, Name: "v-bypass-escape"}, vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
			NewWithT(t).Expect(policy(t, policyName(bypass, "v-bypass-escape"))).To(BeEmpty())
		}},
		{name: "webhook down: a v1beta1 schema bound", try: func(t *testing.T) error {
			a := vaultApp(bypass, "v-bypass-bounds")
			for range 64 {
				a.Spec.Policy.Rules = append(a.Spec.Policy.Rules, a.Spec.Policy.Rules[0])
			}
			return tenant.Create(ctx, alphaOf(t, a))
		}, inert: func(t *testing.T) {
			a := waitApp(t, client.ObjectKey{Namespace: bypass, Name: "v-bypass-bounds"}, vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
			if msg := meta.FindStatusCondition(a.Status.Conditions, vaultv1beta1.TypeReady).Message; !strings.Contains(msg, "must have at most 64 items") {
				t.Fatalf("Ready message = %q", msg)
			}
			NewWithT(t).Expect(policy(t, policyName(bypass, "v-bypass-bounds"))).To(BeEmpty())
		}},
		{name: "webhook down: a granted spec made invalid after it synced", try: func(t *testing.T) error {
			a := vaultApp(bypass, "v-bypass-later")
			if err := tenant.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
			return update(ctx, a, func() { a.Spec.Policy.Rules[0].Path = "../" + victim + "/db" })
		}, inert: func(t *testing.T) {
			// What the earlier spec had live goes: a spec that cannot be
			// checked grants nothing, so no later narrowing is dodged.
			name := policyName(bypass, "v-bypass-later")
			NewWithT(t).Eventually(func() string { return policy(t, name) }).WithTimeout(settle).Should(BeEmpty())
			NewWithT(t).Expect(role(t, name)).To(BeNil())
		}},
		{name: "webhook down: a capability not granted", try: create(vaultApp(bypass, "v-bypass", "read", "create")),
			inert: func(t *testing.T) {
				waitApp(t, client.ObjectKey{Namespace: bypass, Name: "v-bypass"}, vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonGrantNarrowed)
				text := policy(t, policyName(bypass, "v-bypass"))
				if strings.Contains(text, "create") || !strings.Contains(text, `capabilities = ["read"]`) {
					t.Fatalf("Vault holds more than the grant:\n%s", text)
				}
			}},
		{name: "webhook down: Retain", try: func(t *testing.T) error {
			a := vaultApp(bypass, "v-bypass-retain")
			a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
			if err := tenant.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
			return tenant.Delete(ctx, a)
		}, inert: func(t *testing.T) {
			NewWithT(t).Eventually(func() string { return policy(t, policyName(bypass, "v-bypass-retain")) }).WithTimeout(settle).Should(BeEmpty(),
				"a Retain the namespace does not allow kept the policy")
		}},
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			err := a.try(t)
			switch {
			case a.refused == "" && err != nil:
				t.Fatalf("the API refused a request this row expects to be accepted (and inert): %v", err)
			case a.refused != "" && err == nil:
				t.Fatalf("accepted; want refused with %q", a.refused)
			case a.refused != "" && !strings.HasPrefix(err.Error(), a.refused):
				t.Fatalf("message:\n%v\nwant it to start with:\n%s", err, a.refused)
			}
			if a.inert != nil {
				a.inert(t)
			}
		})
	}
}

// TestAdminNarrowsAGrant: what is live shrinks when the admin takes a grant
// back, with a reason in the status and an Event; nothing is blanked.
func TestAdminNarrowsAGrant(t *testing.T) {
	ctx := context.Background()
	t.Run("Keycloak", func(t *testing.T) {
		k := credential(own, "narrowed", appsRealm, "team-a-narrow")
		if err := tenant.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced)
		var written corev1.Secret
		if err := op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: "narrowed-creds"}, &written); err != nil {
			t.Fatal(err)
		}

		var s secretsv1beta1.KeycloakServer
		var kept []secretsv1beta1.AccessGrant
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := op.Client.Get(ctx, client.ObjectKey{Name: server}, &s); err != nil {
				return err
			}
			kept = s.Spec.Access
			s.Spec.Access = removeGrantOf(s.Spec.Access, "team-a-narrow")
			return op.Client.Update(ctx, &s)
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				var now secretsv1beta1.KeycloakServer
				if err := op.Client.Get(ctx, client.ObjectKey{Name: server}, &now); err != nil {
					return err
				}
				now.Spec.Access = kept
				return op.Client.Update(ctx, &now)
			})
		})
		waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionFalse, secretsv1beta1.ReasonAccessNotGranted)
		var after corev1.Secret
		if err := op.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: "narrowed-creds"}, &after); err != nil {
			t.Fatalf("the Secret was removed: %v", err)
		}
		if string(after.Data["secret"]) != string(written.Data["secret"]) || len(after.Data["secret"]) == 0 {
			t.Fatal("the Secret was blanked or changed")
		}
		op.WaitEvent(t, own, "narrowed", secretsv1beta1.ReasonAccessNotGranted)
	})

	t.Run("Vault", func(t *testing.T) {
		setNamespaceAnnotation(t, bypass, tenancy.AllowedCapabilitiesAnnotation, "read,list,update")
		t.Cleanup(func() { setNamespaceAnnotation(t, bypass, tenancy.AllowedCapabilitiesAnnotation, "") })
		a := vaultApp(bypass, "narrowed", "read", "update")
		if err := tenant.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
		name := policyName(bypass, "narrowed")
		if !strings.Contains(policy(t, name), `["read", "update"]`) {
			t.Fatalf("policy before narrowing:\n%s", policy(t, name))
		}

		setNamespaceAnnotation(t, bypass, tenancy.AllowedCapabilitiesAnnotation, "read")
		waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypePolicySynced, metav1.ConditionTrue, vaultv1beta1.ReasonGrantNarrowed)
		// Ready summarises: False with AccessGranted's reason.
		waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeAccessGranted, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
		waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
		if text := policy(t, name); strings.Contains(text, "update") {
			t.Fatalf("policy after narrowing still grants update:\n%s", text)
		}
		op.WaitEvent(t, bypass, "narrowed", vaultv1beta1.ReasonGrantNarrowed)

		setNamespaceAnnotation(t, bypass, tenancy.AllowedCapabilitiesAnnotation, "create")
		waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionFalse, vaultv1beta1.ReasonNotAllowed)
		NewWithT(t).Eventually(func() string { return policy(t, name) }).WithTimeout(settle).Should(BeEmpty(), "policy left after the grant was taken back")
		NewWithT(t).Expect(role(t, name)).To(BeNil(), "role left after the grant was taken back")
		op.WaitEvent(t, bypass, "narrowed", vaultv1beta1.ReasonGrantRevoked)
	})
}

// update is the tenant's edit of obj: read fresh, changed by mutate, written;
// again when the operator wrote the object in between (its status, its
// finalizer), so that the answer is the one the edit itself gets.
func update(ctx context.Context, obj client.Object, mutate func()) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate()
		return tenant.Update(ctx, obj)
	})
}

// alphaOf is the v1alpha1 object a tenant sends to get hub: what v1alpha1
// cannot say rides in the conversion annotation, as the operator's own
// conversion would put it there.
func alphaOf(t *testing.T, hub *vaultv1beta1.VaultApp) *vaultv1alpha1.VaultApp {
	t.Helper()
	alpha := &vaultv1alpha1.VaultApp{}
	if err := alpha.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	return alpha
}

func removeGrantOf(grants []secretsv1beta1.AccessGrant, clientID string) []secretsv1beta1.AccessGrant {
	var out []secretsv1beta1.AccessGrant
	for _, g := range grants {
		if len(g.ClientIDs) == 1 && g.ClientIDs[0] == clientID {
			continue
		}
		out = append(out, g)
	}
	return out
}

// TestOrphanIsSwept: a policy and role the operator wrote for a VaultApp
// that is gone — what a finalizer removed by hand leaves — are found and
// removed on the periodic pass, with an Event on the namespace.
func TestOrphanIsSwept(t *testing.T) {
	ctx := context.Background()
	a := vaultApp(own, "v-gone")
	if err := tenant.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitApp(t, client.ObjectKeyFromObject(a), vaultv1beta1.TypeReady, metav1.ConditionTrue, vaultv1beta1.ReasonSynced)
	name := policyName(own, "v-gone")
	text, roleData := policy(t, name), role(t, name)
	if err := tenant.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Eventually(func() string { return policy(t, name) }).WithTimeout(settle).Should(BeEmpty())
	// What the VaultApp leaves when its finalizer never ran.
	if err := vaultAdmin.Sys().PutPolicy(name, text); err != nil {
		t.Fatal(err)
	}
	if _, err := vaultAdmin.Logical().Write("auth/kubernetes/role/"+name, map[string]any{
		"bound_service_account_names": roleData["bound_service_account_names"], "bound_service_account_namespaces": roleData["bound_service_account_namespaces"],
		"token_policies": roleData["token_policies"],
	}); err != nil {
		t.Fatal(err)
	}
	// A retained policy and a foreign one are left alone.
	retained := strings.Replace(text, "# Managed by vault-keycloak-operator for VaultApp "+own+"/v-gone", "# Retained by vault-keycloak-operator from VaultApp "+own+"/v-kept", 1)
	if err := vaultAdmin.Sys().PutPolicy(policyName(own, "v-kept"), retained); err != nil {
		t.Fatal(err)
	}

	NewWithT(t).Eventually(func() string { return policy(t, name) }).WithTimeout(settle).Should(BeEmpty(), "orphaned policy not swept")
	NewWithT(t).Expect(role(t, name)).To(BeNil(), "orphaned role not swept")
	NewWithT(t).Expect(policy(t, policyName(own, "v-kept"))).To(Equal(retained), "a retained policy was swept")
	// Said in the tenant's own namespace, about the VaultApp that is gone;
	// nothing about it in default, where other tenants may read.
	NewWithT(t).Eventually(func() map[string][]string { return op.Events(t, own, "v-gone") }).WithTimeout(settle).Should(HaveKey(vaultv1beta1.ReasonOrphanRemoved))
	NewWithT(t).Expect(op.Events(t, "default", own)).NotTo(HaveKey(vaultv1beta1.ReasonOrphanRemoved))
}
