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

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// Credentials are sharded like VaultApps, on the real API server (with the
// feature and without) and the real Keycloak, with two shards:
//   - each credential is written by the shard of its namespace alone
//     (the audit log's user agents), and so are the Secrets it writes,
//     in whichever namespace they sit;
//   - a Secret a credential of shard 0 wrote into a namespace of shard 1,
//     edited by hand, is repaired at once by shard 0 (its Secret cache
//     selects the Secrets by their writer's bucket);
//   - a rotation by shard 0 reaches a reader of the same client in shard
//     1's namespace at once, not at its refresh (an hour): through the
//     ConfigMap of rotations;
//   - where the API server filters, each shard watches its range of
//     credentials alone; on any, its range of Secrets (by label).
func TestShardsSplitTheCredentials(t *testing.T) {
	for _, serverSide := range []bool{true, false} {
		t.Run(fmt.Sprintf("ShardedListAndWatch=%t", serverSide), func(t *testing.T) { testShardedCredentials(t, serverSide) })
	}
}

func testShardedCredentials(t *testing.T, serverSide bool) {
	ctx := context.Background()
	const shards = 2
	w, start := newShardedWorld(t, serverSide, shards)
	c := w.c
	var agents []string
	for i := range shards {
		start(fmt.Sprintf("shard-%d", i), i)
		agents = append(agents, shardAgent(i, shards))
	}
	// orders is shard 0's of 2, payments shard 1's (the hash is fixed).
	writerNS, readerNS := "orders", "payments"
	if !(shard.Shard{Index: 0, Count: shards}).Owns(writerNS) || !(shard.Shard{Index: 1, Count: shards}).Owns(readerNS) {
		t.Fatalf("pick namespaces of shard 0 and 1")
	}
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: writerNS}},
		{ObjectMeta: metav1.ObjectMeta{Name: readerNS, Annotations: map[string]string{tenancy.AllowedSourceNamespacesAnnotation: writerNS}}},
	} {
		if err := c.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	realm := "shards" + strings.ToLower(fmt.Sprint(serverSide))
	link, _ := w.withKeycloak(t, realm, "sh", 1, writerNS, readerNS)
	kc, err := harness.KeycloakFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kc.Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.RotateWithGrace(ctx, realm, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: "sso-shards"}, Spec: secretsv1beta1.KeycloakServerSpec{
		URL: "http://" + link.Addr, Realm: "master", AuthType: secretsv1beta1.AuthClientCredentials,
		CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "keycloak-credentials"},
		Access: []secretsv1beta1.AccessGrant{{Namespaces: []string{writerNS, readerNS}, Realms: []string{realm},
			ClientIDs: []string{"sh-*"}, Rotate: true}},
	}}); err != nil {
		t.Fatal(err)
	}
	credential := func(ns, name string, targets ...string) *secretsv1beta1.KeycloakClientCredential {
		return &secretsv1beta1.KeycloakClientCredential{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: secretsv1beta1.KeycloakClientCredentialSpec{
				Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "sso-shards"}, Realm: realm, ClientID: "sh-00"},
				Target: secretsv1beta1.TargetSpec{SecretName: name + "-creds", Namespaces: targets,
					Keys: secretsv1beta1.SecretKeys{ClientID: "key", ClientSecret: "secret"}},
				// Only the operator's signal can bring a rotation sooner.
				RefreshInterval: &metav1.Duration{Duration: time.Hour},
				Rotation:        &secretsv1beta1.RotationSpec{GracePeriod: &metav1.Duration{Duration: time.Minute}},
			},
		}
	}
	writer, reader := credential(writerNS, "writer", writerNS, readerNS), credential(readerNS, "reader", readerNS)
	for _, k := range []*secretsv1beta1.KeycloakClientCredential{writer, reader} {
		if err := c.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	waitSynced(t, w, client.ObjectKeyFromObject(writer))
	waitSynced(t, w, client.ObjectKeyFromObject(reader))

	// Who wrote what: the credentials and the Secrets, by the shard of
	// the credential's namespace, wherever the Secret sits.
	events, offset, err := w.cluster.AuditEventsBy(0, harness.ManagerUser)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"keycloakclientcredentials " + writerNS + "/writer": agents[0], "keycloakclientcredentials " + readerNS + "/reader": agents[1],
		"secrets " + writerNS + "/writer-creds": agents[0], "secrets " + readerNS + "/writer-creds": agents[0],
		"secrets " + readerNS + "/reader-creds": agents[1],
	}
	checkWriters := func(events []harness.AuditEvent, when string) {
		t.Helper()
		for _, e := range events {
			if !e.Write() {
				continue
			}
			key := e.ObjectRef.Resource + " " + e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
			if agent, ok := want[key]; ok && e.UserAgent != agent {
				t.Errorf("%s: %s %s written by %q, want by %q alone", when, e.Verb, key, e.UserAgent, agent)
			}
		}
	}
	checkWriters(events, "first pass")

	// Each shard caches its writers' Secrets (a label selector), and
	// where the API server filters, its range of credentials alone.
	watches, _, err := w.cluster.AuditWatchesStarted(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range watches {
		if e.User.Username != harness.ManagerUser {
			continue
		}
		switch e.ObjectRef.Resource {
		case "secrets":
			if e.ObjectRef.Namespace == "" && !strings.Contains(e.RequestURI, "owner-bucket") {
				t.Errorf("%s watches every managed Secret: %s", e.UserAgent, e.RequestURI)
			}
		case "keycloakclientcredentials":
			if sharded := strings.Contains(e.RequestURI, "shardSelector="); sharded != serverSide {
				t.Errorf("%s watches credentials with a shardSelector: %t, want %t: %s", e.UserAgent, sharded, serverSide, e.RequestURI)
			}
		}
	}

	// A Secret of shard 0's writer, in shard 1's namespace, edited by hand.
	var edited corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: readerNS, Name: "writer-creds"}, &edited); err != nil {
		t.Fatal(err)
	}
	good := string(edited.Data["secret"])
	edited.Data["secret"] = []byte("edited by hand")
	if err := c.Update(ctx, &edited); err != nil {
		t.Fatal(err)
	}
	waitSecret(t, w, readerNS, "writer-creds", good, 10*time.Second, "the edited Secret repaired")

	// A rotation by shard 0 reaches shard 1's reader at once.
	askRotation(t, w, client.ObjectKeyFromObject(writer), "r1")
	deadline := time.Now().Add(30 * time.Second)
	for keycloakSecret(t, realm, "sh-00") == good {
		if time.Now().After(deadline) {
			t.Fatalf("not regenerated within 30 s: %+v", credentialOf(t, w, client.ObjectKeyFromObject(writer)).Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
	rotated := keycloakSecret(t, realm, "sh-00")
	waitSecret(t, w, readerNS, "reader-creds", rotated, 15*time.Second, "shard 1's reader holds the rotated secret (its refresh is an hour away)")
	waitSecret(t, w, readerNS, "writer-creds", rotated, 15*time.Second, "the writer's Secret in shard 1's namespace holds it")
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: secretscontroller.RotationsName("sso-shards")}, &cm); err != nil {
		t.Fatalf("the ConfigMap of rotations: %v", err)
	}
	for k, v := range cm.Data {
		if strings.Contains(v, rotated) || strings.Contains(v, good) {
			t.Errorf("the ConfigMap of rotations holds a secret in %s", k)
		}
	}
	events, _, err = w.cluster.AuditEventsBy(offset, harness.ManagerUser)
	if err != nil {
		t.Fatal(err)
	}
	checkWriters(events, "repair and rotation")
	// The ConfigMaps read and watched are the rotations' alone, in the
	// operator's namespace: its Role there allows no more.
	watches, _, err = w.cluster.AuditWatchesStarted(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(events, watches...) {
		if e.User.Username == harness.ManagerUser && e.ObjectRef.Resource == "configmaps" &&
			(e.ObjectRef.Namespace != operatorNamespace || (e.Verb == "watch" || e.Verb == "list") && !strings.Contains(e.RequestURI, "keycloak-rotations")) {
			t.Errorf("%s: %s %s beyond the ConfigMaps of rotations", e.UserAgent, e.Verb, e.RequestURI)
		}
	}
}

// waitSecret waits until ns/name's "secret" key holds want.
func waitSecret(t *testing.T, w *world, ns, name, want string, timeout time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var s corev1.Secret
		err := w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s)
		if err == nil && string(s.Data["secret"]) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Secret %s/%s not in step within %s (%v)", what, ns, name, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
