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

package migration_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/manager"
	"github.com/carbogame/vault-keycloak-operator/internal/migration"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// perKind is how many objects of each kind the old release stored.
const perKind = 120

// TestMigrationFromStoredV1alpha1 is the upgrade a user makes: objects
// stored by a release whose storage version was v1alpha1, then CRDs whose
// storage version is v1beta1, then the migrator — interrupted once, run
// again, and run a third time for nothing.
func TestMigrationFromStoredV1alpha1(t *testing.T) {
	ctx := context.Background()
	op, err := harness.Start(harness.Config{
		Options: manager.Options{WebhooksOnly: true},
		CRDDir:  oldReleaseCRDs(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Stop)
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{op.Env.ControlPlane.Etcd.URL.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Close() })

	created := createEverything(t, op.Client, perKind)
	for _, prefix := range registryPrefixes {
		NewWithT(t).Expect(storedVersions(t, etcd, prefix)).To(Equal(map[string]int{versionOf(prefix, "v1alpha1"): perKind}), prefix)
	}
	before := views(t, op.Client)

	// The new release: v1beta1 becomes the storage version.
	for _, name := range manager.OwnedCRDs {
		setStorage(t, op.Client, name, "v1beta1")
		NewWithT(t).Expect(crdStoredVersions(t, op.Client, name)).To(Equal([]string{"v1alpha1", "v1beta1"}))
	}

	dc, err := discovery.NewDiscoveryClientForConfig(op.Config)
	if err != nil {
		t.Fatal(err)
	}
	m := &migration.Migrator{Client: op.Client, Discovery: dc, Log: logr.Discard(), PageSize: 50}

	// Interrupted midway through the second CRD.
	interrupted, cancel := context.WithCancel(ctx)
	m.Progress = func(crd string, n int) {
		if crd == manager.OwnedCRDs[1] && n == perKind/2 {
			cancel()
		}
	}
	if _, err := m.Migrate(interrupted, manager.OwnedCRDs...); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v, want context.Canceled", err)
	}
	NewWithT(t).Expect(crdStoredVersions(t, op.Client, manager.OwnedCRDs[0])).To(Equal([]string{"v1beta1"}), "the first CRD finished")
	NewWithT(t).Expect(crdStoredVersions(t, op.Client, manager.OwnedCRDs[1])).To(Equal([]string{"v1alpha1", "v1beta1"}), "the second did not")

	// Run again: it completes.
	m.Progress = nil
	results, err := m.Migrate(ctx, manager.OwnedCRDs...)
	if err != nil {
		t.Fatal(err)
	}
	NewWithT(t).Expect(results[0].UpToDate).To(BeTrue())
	NewWithT(t).Expect(results[1].Migrated).To(Equal(perKind))
	NewWithT(t).Expect(results[2].Migrated).To(Equal(perKind))
	for _, name := range manager.OwnedCRDs {
		NewWithT(t).Expect(crdStoredVersions(t, op.Client, name)).To(Equal([]string{"v1beta1"}), name)
	}
	for _, prefix := range registryPrefixes {
		NewWithT(t).Expect(storedVersions(t, etcd, prefix)).To(Equal(map[string]int{versionOf(prefix, "v1beta1"): perKind}),
			"raw etcd bytes under %s", prefix)
	}
	NewWithT(t).Expect(testutil.ToFloat64(migration.ObjectsMigrated(manager.OwnedCRDs[2]))).To(BeNumerically(">=", perKind))

	// No field lost, in either version's view.
	after := views(t, op.Client)
	for key, want := range before {
		if !bytes.Equal(after[key], want) {
			t.Errorf("%s changed in the migration:\nbefore: %s\nafter:  %s", key, want, after[key])
		}
	}
	NewWithT(t).Expect(after).To(HaveLen(len(before)))
	NewWithT(t).Expect(before).To(HaveLen(2 * len(created)))

	// Idempotent: a third run rewrites nothing.
	results, err = m.Migrate(ctx, manager.OwnedCRDs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		NewWithT(t).Expect(r.UpToDate).To(BeTrue(), r.CRD)
		NewWithT(t).Expect(r.Migrated).To(BeZero(), r.CRD)
	}
}

// TestMigrationStopsWhenTheStorageVersionChanges: a release that takes over
// during a run changes the storage version; the run stops rather than trim
// storedVersions to a version that is no longer the storage one.
func TestMigrationStopsWhenTheStorageVersionChanges(t *testing.T) {
	ctx := context.Background()
	op, err := harness.Start(harness.Config{Options: manager.Options{WebhooksOnly: true}, CRDDir: oldReleaseCRDs(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(op.Stop)
	ns := op.NewNamespace(t, map[string]string{"vault.exemple.com/allowed-capabilities": "create,read,update,patch,delete,list", "vault.exemple.com/allow-retain": "true"})
	for i := range 10 {
		app := vaultApp(ns, i)
		if err := op.Client.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	crd := manager.OwnedCRDs[0]
	setStorage(t, op.Client, crd, "v1beta1")
	m := &migration.Migrator{Client: op.Client, Log: logr.Discard(), PageSize: 3,
		Progress: func(_ string, n int) {
			if n == 2 {
				setStorage(t, op.Client, crd, "v1alpha1")
			}
		}}
	if _, err := m.MigrateCRD(ctx, crd); !errors.Is(err, migration.ErrStorageVersionChanged) {
		t.Fatalf("err = %v, want ErrStorageVersionChanged", err)
	}
	NewWithT(t).Expect(crdStoredVersions(t, op.Client, crd)).To(Equal([]string{"v1alpha1", "v1beta1"}), "storedVersions left alone")
}

var registryPrefixes = []string{
	"/registry/vault.exemple.com/vaultapps/",
	"/registry/secrets.carbogame.com/keycloakclientcredentials/",
	"/registry/secrets.carbogame.com/keycloakservers/",
}

func versionOf(prefix, version string) string {
	return strings.Split(prefix, "/")[2] + "/" + version
}

// storedVersions reads the raw objects under an etcd prefix and counts them
// by the apiVersion they were stored in.
func storedVersions(t *testing.T, etcd *clientv3.Client, prefix string) map[string]int {
	t.Helper()
	resp, err := etcd.Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("read etcd: %v", err)
	}
	out := map[string]int{}
	for _, kv := range resp.Kvs {
		var head struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := yaml.Unmarshal(kv.Value, &head); err != nil {
			t.Fatalf("%s: %v", kv.Key, err)
		}
		out[head.APIVersion]++
	}
	return out
}

// oldReleaseCRDs writes the current CRDs with v1alpha1 as the storage
// version, as a release before v1beta1 became the hub installed them.
func oldReleaseCRDs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(harness.RepoRoot(), "config", "crd", "bases")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".yaml" {
			continue // embed.go, which ships them in the binary
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		// VaultServer serves v1beta1 alone: it stays as it is (the manager
		// under test watches it).
		for i := range crd.Spec.Versions {
			if len(crd.Spec.Versions) > 1 {
				crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == "v1alpha1"
			}
		}
		out, err := yaml.Marshal(&crd)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), out, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func setStorage(t *testing.T, c client.Client, name, version string) {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &crd); err != nil {
		t.Fatal(err)
	}
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
	}
	if err := c.Update(context.Background(), &crd); err != nil {
		t.Fatalf("set storage version of %s to %s: %v", name, version, err)
	}
}

func crdStoredVersions(t *testing.T, c client.Client, name string) []string {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &crd); err != nil {
		t.Fatal(err)
	}
	v := slices.Clone(crd.Status.StoredVersions)
	slices.Sort(v)
	return v
}

// createEverything stores perKind objects of every kind, every field set;
// a third of them written through v1alpha1.
func createEverything(t *testing.T, c client.Client, perKind int) []client.Object {
	t.Helper()
	ctx := context.Background()
	var objs []client.Object
	nss := []string{"team-a", "team-b", "team-c"}
	for _, ns := range nss {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{
			"vault.exemple.com/allowed-capabilities": "create,read,update,patch,delete,list",
			"vault.exemple.com/allow-retain":         "true",
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range perKind {
		ns := nss[i%len(nss)]
		objs = append(objs, server(i), vaultApp(ns, i), credential(ns, i))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	return objs
}

func vaultApp(ns string, i int) client.Object {
	if i%3 == 0 {
		return &vaultv1alpha1.VaultApp{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Namespace: ns, Labels: map[string]string{"team": ns}},
			Spec:       vaultv1alpha1.VaultAppSpec{VaultPolicy: vaultv1alpha1.PresetReadWrite, ServiceAccount: "sa", SecretPaths: []string{"db", "cache/*"}},
		}
	}
	return &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", i), Namespace: ns, Labels: map[string]string{"team": ns},
			Annotations: map[string]string{"owner": "someone"}},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{
				{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}},
				{Path: "queue/+/jobs", Capabilities: []vaultv1beta1.Capability{"create", "update"}},
			}},
			KubernetesAuth:  vaultv1beta1.KubernetesAuthSpec{ServiceAccounts: []string{"api", "worker"}, TokenTTL: &metav1.Duration{Duration: 90 * time.Minute}},
			RefreshInterval: &metav1.Duration{Duration: 2 * time.Minute},
			DeletionPolicy:  vaultv1beta1.DeletionPolicyRetain,
		},
	}
}

func server(i int) client.Object {
	name := fmt.Sprintf("kc-%03d", i)
	if i%3 == 0 {
		return &secretsv1alpha1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: secretsv1alpha1.KeycloakServerSpec{URL: "https://sso.example.com", Realm: "ops", CredentialsSecret: "kc-creds", AllowedNamespaces: []string{"*"},
				Access: []secretsv1alpha1.AccessGrant{{Namespaces: []string{"*"}, Realms: []string{"apps"}, ClientIDs: []string{"gitea"}, Rotate: true}}}}
	}
	return &secretsv1beta1.KeycloakServer{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: secretsv1beta1.KeycloakServerSpec{URL: "https://sso.example.com", Realm: "ops", AuthType: secretsv1beta1.AuthPassword,
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "kc-creds"}, CABundle: testCA, AllowedNamespaces: []string{"*"},
			Access: []secretsv1beta1.AccessGrant{{Namespaces: []string{"team-*"}, Realms: []string{"apps"}, ClientIDs: []string{"gitea", "other-*"}, Rotate: true}}}}
}

func credential(ns string, i int) client.Object {
	name := fmt.Sprintf("cred-%03d", i)
	server := fmt.Sprintf("kc-%03d", i)
	if i%3 == 0 {
		return &secretsv1alpha1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: secretsv1alpha1.KeycloakClientCredentialSpec{
				Source: secretsv1alpha1.Source{KeycloakServer: server, Realm: "apps", ClientID: "gitea"},
				Target: secretsv1alpha1.Target{SecretName: name, Namespace: []string{ns}, RefreshPeriod: &metav1.Duration{Duration: 10 * time.Minute},
					Fields: secretsv1alpha1.Fields{ClientID: "key", ClientSecret: "secret"}},
			}}
	}
	return &secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: server}, Realm: "apps", ClientID: "gitea"},
			Target: secretsv1beta1.TargetSpec{
				SecretName: name, Namespaces: []string{ns}, Type: corev1.SecretTypeOpaque,
				Keys:        secretsv1beta1.SecretKeys{ClientID: "key", ClientSecret: "secret", IssuerURL: "issuer", TokenURL: "token"},
				Labels:      map[string]string{"reloader": "on"},
				Annotations: map[string]string{"note": "synced"},
			},
			RefreshInterval: &metav1.Duration{Duration: 5 * time.Minute},
			DeletionPolicy:  secretsv1beta1.DeletionPolicyRetain,
			Rotation:        &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: 48 * time.Hour}},
		}}
}

// views reads every object in both versions and keeps what a user can set
// (metadata labels and annotations, spec), by version/kind/namespace/name.
func views(t *testing.T, c client.Client) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	add := func(version, kind string, items []client.Object, spec func(client.Object) any) {
		for _, o := range items {
			data, err := yaml.Marshal(map[string]any{"labels": o.GetLabels(), "annotations": o.GetAnnotations(), "spec": spec(o)})
			if err != nil {
				t.Fatal(err)
			}
			out[version+"/"+kind+"/"+o.GetNamespace()+"/"+o.GetName()] = data
		}
	}
	var va1 vaultv1alpha1.VaultAppList
	var vb1 vaultv1beta1.VaultAppList
	var ca1 secretsv1alpha1.KeycloakClientCredentialList
	var cb1 secretsv1beta1.KeycloakClientCredentialList
	var sa1 secretsv1alpha1.KeycloakServerList
	var sb1 secretsv1beta1.KeycloakServerList
	for _, l := range []client.ObjectList{&va1, &vb1, &ca1, &cb1, &sa1, &sb1} {
		if err := c.List(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	add("v1alpha1", "VaultApp", ptrs(va1.Items), func(o client.Object) any { return o.(*vaultv1alpha1.VaultApp).Spec })
	add("v1beta1", "VaultApp", ptrs(vb1.Items), func(o client.Object) any { return o.(*vaultv1beta1.VaultApp).Spec })
	add("v1alpha1", "KeycloakClientCredential", ptrs(ca1.Items), func(o client.Object) any { return o.(*secretsv1alpha1.KeycloakClientCredential).Spec })
	add("v1beta1", "KeycloakClientCredential", ptrs(cb1.Items), func(o client.Object) any { return o.(*secretsv1beta1.KeycloakClientCredential).Spec })
	add("v1alpha1", "KeycloakServer", ptrs(sa1.Items), func(o client.Object) any { return o.(*secretsv1alpha1.KeycloakServer).Spec })
	add("v1beta1", "KeycloakServer", ptrs(sb1.Items), func(o client.Object) any { return o.(*secretsv1beta1.KeycloakServer).Spec })
	return out
}

func ptrs[T any, P interface {
	*T
	client.Object
}](items []T) []client.Object {
	out := make([]client.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}

// testCA is a self-signed certificate, for a caBundle that validates.
var testCA = func() []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}()
