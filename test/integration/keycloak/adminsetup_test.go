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

package keycloak_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// The admin setup's KeycloakServer, applied as written against the run's
// Keycloak (its address, and the realm's and the server's names, so that
// the suites sharing that Keycloak and this cluster keep apart, are the
// placeholders), with the operator's client
// holding the roles the page gives it in a realm that rotates with grace:
// each grant lets its namespaces copy its clients and no other, and the app
// team guide's rotation blocks, run as written where the grant says rotate,
// regenerate the client's secret and bring it to the Secret.
func TestAdminSetupsKeycloakServerAsWritten(t *testing.T) {
	ctx := context.Background()
	serverYAML, err := harness.DocYAML("docs/admin-setup.md", "kind: KeycloakServer", "rotate: true")
	if err != nil {
		t.Fatal(err)
	}
	apps := fmt.Sprintf("apps-%04d", rand.IntN(10000))
	if err := createRealm(ctx, kc, apps); err != nil {
		t.Fatal(err)
	}
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.RotateWithGrace(ctx, apps, time.Hour); err != nil {
		t.Fatal(err)
	}
	server := &secretsv1beta1.KeycloakServer{}
	// The suite's cluster holds the samples' prod-keycloak too.
	written := strings.NewReplacer("https://sso.example.com", kc.URL, "realms: [apps]", "realms: ["+apps+"]",
		"prod-keycloak", "admin-setup-keycloak").Replace(serverYAML)
	if err := yaml.UnmarshalStrict([]byte(written), server); err != nil {
		t.Fatal(err)
	}
	if got := operatorCredentials(t, kc, server.Name, apps); got != server.Spec.CredentialsSecretRef.Name {
		t.Fatalf("the operator's credentials are in Secret %s, the page's server reads %s", got, server.Spec.CredentialsSecretRef.Name)
	}
	if err := op.Client.Create(ctx, server); err != nil {
		t.Fatalf("the page's KeycloakServer: %v", err)
	}
	waitServer(t, server.Name, secretsv1beta1.TypeConnected, metav1.ConditionTrue, secretsv1beta1.ReasonConnected, 30*time.Second)

	// The namespaces and clients its grants name: gitea reads gitea, the
	// team-a-* namespaces read and rotate the team-a-* clients.
	for _, ns := range []string{"gitea", "team-a-shop", "team-a-blue"} {
		if err := op.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"gitea", "team-a-web", "team-a-api"} {
		if err := createClient(ctx, kc, apps, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	in := func(ns, name, clientID string) *secretsv1beta1.KeycloakClientCredential {
		k := credential(ns, name, server.Name, clientID, ns)
		k.Spec.Source.Realm = apps
		return k
	}
	ready := func(k *secretsv1beta1.KeycloakClientCredential) {
		t.Helper()
		if err := op.Client.Create(ctx, k); err != nil {
			t.Fatalf("credential %s/%s for client %s: %v", k.Namespace, k.Name, k.Spec.Source.ClientID, err)
		}
		waitCredential(t, client.ObjectKeyFromObject(k), secretsv1beta1.TypeReady, metav1.ConditionTrue, secretsv1beta1.ReasonSynced, 30*time.Second)
	}
	// team-a-shop's credential rotates with the app team guide's spec.
	rotationYAML, err := harness.DocYAML("docs/app-teams.md", "gracePeriod:", "previousClientSecret")
	if err != nil {
		t.Fatal(err)
	}
	shopWeb := in("team-a-shop", "shop-web", "team-a-web")
	if err := yaml.UnmarshalStrict([]byte(rotationYAML), shopWeb); err != nil {
		t.Fatal(err)
	}
	previousKey := shopWeb.Spec.Target.Keys.PreviousClientSecret
	if shopWeb.Spec.Rotation == nil || previousKey == "" {
		t.Fatal("docs/app-teams.md's rotation spec sets no rotation or no previousClientSecret key: this test proves nothing of it")
	}
	ready(in("gitea", "gitea", "gitea"))
	ready(shopWeb)
	ready(in("team-a-blue", "shop-web", "team-a-api"))
	err = op.Client.Create(ctx, in("gitea", "team-a-web", "team-a-web"))
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`client "team-a-web" in realm %q is not granted to namespace "gitea"`, apps)))

	// docs/app-teams.md's rotation blocks: the annotation in team-a-shop,
	// kubectl vko in team-a-blue (a second rotation of one credential waits
	// five minutes).
	blocks, err := harness.DocBlocks("docs/app-teams.md")
	if err != nil {
		t.Fatal(err)
	}
	var rotations []harness.DocBlock
	for _, b := range blocks {
		if b.Where == "rotate" {
			rotations = append(rotations, b)
		}
	}
	targets := []struct{ ns, clientID string }{{"team-a-shop", "team-a-web"}, {"team-a-blue", "team-a-api"}}
	if len(rotations) != len(targets) {
		t.Fatalf("docs/app-teams.md has %d blocks marked where=rotate, this test runs %d", len(rotations), len(targets))
	}
	dir := t.TempDir()
	bin, err := harness.KubectlBin(dir)
	if err != nil {
		t.Fatal(err)
	}
	shell, err := harness.NewDocShell(dir, []string{"KUBECONFIG=" + op.Kubeconfig}, bin)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range rotations {
		target := targets[i]
		before, err := clientSecretOf(ctx, kc, apps, target.clientID)
		if err != nil {
			t.Fatal(err)
		}
		harness.KeepSecret(before)
		shell.Placeholders = map[string]string{"-n shop": "-n " + target.ns}
		out, err := shell.Run(ctx, b, 2*time.Minute)
		t.Logf("%s:\n%s", b, harness.Indent(out, "  | "))
		if err != nil {
			t.Fatal(err)
		}
		op.WaitEvent(t, target.ns, "shop-web", secretsv1beta1.ReasonRotated)
		NewWithT(t).Eventually(func(g Gomega) {
			now, err := clientSecretOf(ctx, kc, apps, target.clientID)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(now).NotTo(Equal(before), "client %s regenerated", target.clientID)
			harness.KeepSecret(now)
			g.Expect(string(secretOf(t, target.ns, "shop-web-creds").Data["secret"])).To(Equal(now), "the Secret holds the new secret")
		}).WithTimeout(30 * time.Second).Should(Succeed())
		if target.ns == shopWeb.Namespace { // in its grace, the previous secret beside the new
			NewWithT(t).Expect(string(secretOf(t, target.ns, "shop-web-creds").Data[previousKey])).To(Equal(before))
		}
	}
}
