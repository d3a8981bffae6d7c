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

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// fleetShape is a fleet's size.
type fleetShape struct {
	Namespaces int
	// Size is how many VaultApps, and how many KeycloakClientCredentials.
	Size int
	// Unrelated is how many Secrets the operator has nothing to do with.
	Unrelated int
	// Clients is how many Keycloak clients the credentials read (credential
	// i reads the client of namespace i mod Clients).
	Clients int
	// Refresh is every object's refreshInterval.
	Refresh time.Duration
	// FeatureGates are the API server's.
	FeatureGates string
}

// shape is the fleet being measured: what a platform team runs, scaled to
// the figures, unless BenchmarkScale set its own before building
// its fleet (benchmarks run one after the other).
var shape = benchShape

var benchShape = fleetShape{Namespaces: 50, Size: 1000, Unrelated: 10000, Clients: 50, Refresh: refresh}

const (
	// refresh is every object's refreshInterval: P2's window, and P4's
	// bound for Vault drift.
	refresh = 45 * time.Second

	operatorNamespace = "vko-system"
	operatorSA        = "vko-manager"
	serverName        = "fleet-keycloak"
	runLabel          = "bench.vko/run"
	// defaultWorkers is --max-concurrent-reconciles as the manager ships.
	defaultWorkers = 8
	// fleetRun names the VaultApps P1 leaves in place for the later phases.
	fleetRun    = "op-w8"
	clientRealm = "operator"
)

// fleet is the bench's world: a control plane, the real Vault and Keycloak
// behind counting proxies, and the manager binary run as its own process.
type fleet struct {
	dir      string
	cluster  *harness.ProcessCluster
	c        client.Client
	vault    *harness.Vault
	keycloak *harness.Keycloak
	// vaultProxy and vaultProxyB (the addresses of the two VaultServers,
	// one Vault behind both) and keycloakProxy stand between the manager
	// and the services; limitProxy and keycloakLimitProxy between the
	// bare clients and Vault or Keycloak.
	vaultProxy, vaultProxyB, keycloakProxy, limitProxy, keycloakLimitProxy *harness.CountingProxy
	tokenPath, saToken                                                     string
	manager                                                                *harness.Manager
	managers                                                               int
	// spent is where the bench's time went (the table's last row).
	spent *timeSpent
	all   []*harness.Manager
	// processStart and the proxies' counts then: the manager started by
	// restartInStep, whose whole life P3 and P5 judge.
	processStart                  time.Time
	processVault, processKeycloak map[string]int
	auditOffset                   int64
	// secrets are every secret value the bench handled, for the sweep of
	// the managers' logs at the end.
	secrets []string
	// created counts the objects timeRun created since a run's profiles
	// were set to wait for it (profileRun).
	created atomic.Int64
	// etcd is the control plane's store, where a run's objects are taken
	// away (removeFromStore); connected at the first cleanup.
	etcd *clientv3.Client
}

func nsName(i int) string { return fmt.Sprintf("fleet-%02d", i%shape.Namespaces) }

// clientOf is the Keycloak client credential i reads.
func clientOf(i int) string { return "fleet-" + nsName(i%shape.Clients) }

// grantedNamespaces lists the fleet's namespaces in a grant, or names them
// by their prefix where they are more than a grant lists (64).
func grantedNamespaces() []string {
	if shape.Namespaces > 64 {
		return []string{"fleet-*"}
	}
	var names []string
	for i := range shape.Namespaces {
		names = append(names, nsName(i))
	}
	return names
}

// classifyKeycloak tells token requests, reads and writes apart.
func classifyKeycloak(r *http.Request) string {
	switch {
	case strings.HasSuffix(r.URL.Path, "/protocol/openid-connect/token"):
		return "token"
	case strings.HasSuffix(r.URL.Path, "/admin-events"):
		return "events" // per realm, not per credential
	case r.Method == http.MethodGet:
		return "read"
	}
	return "write"
}

// newFleet is the fleet on the Vault make bench started (VAULT_ADDR).
func newFleet(b *testing.B) *fleet {
	b.Helper()
	return newFleetOn(b, func(*testing.B, string) (*harness.Vault, error) { return harness.VaultFromEnv() })
}

// newFleetOn is the fleet on the server vault gives (dir is the fleet's).
func newFleetOn(b *testing.B, vault func(b *testing.B, dir string) (*harness.Vault, error)) *fleet {
	b.Helper()
	ctx := context.Background()
	f := &fleet{dir: memoryDir(b), spent: newTimeSpent()}
	defer f.spent.on("setup", time.Now())
	// The operator's token file and the Vault reviewer's token are asked
	// for once: they must outlive the run (until 2026-12-03 they expired
	// after 10 minutes, and every manager started later, P7's, failed its
	// Vault logins: a load of failed VaultApps beside P7's runs).
	harness.TokenLifetime = 12 * time.Hour
	b.Cleanup(func() { harness.TokenLifetime = 10 * time.Minute })
	// The bench's own clients log their rare warnings; the manager's
	// log is its process's, in the fleet's directory.
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	var err error
	if f.vault, err = vault(b, f.dir); err != nil {
		b.Fatal(err)
	}
	if f.keycloak, err = harness.KeycloakFromEnv(); err != nil {
		b.Fatal(err)
	}
	// The API server's sharded list and watch (alpha in 1.37) for
	// bench-scale's shards; a manager run whole asks for none.
	if f.cluster, err = harness.StartProcessClusterWith(f.dir, harness.ClusterOptions{FeatureGates: shape.FeatureGates}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(f.cluster.Stop)
	f.c = f.cluster.Client
	for _, p := range []struct {
		proxy    **harness.CountingProxy
		target   string
		classify func(*http.Request) string
	}{{&f.vaultProxy, f.vault.Addr, harness.ClassifyVault}, {&f.vaultProxyB, f.vault.Addr, harness.ClassifyVault},
		{&f.keycloakProxy, f.keycloak.URL, classifyKeycloak}, {&f.limitProxy, f.vault.Addr, harness.ClassifyVault},
		{&f.keycloakLimitProxy, f.keycloak.URL, classifyKeycloak}} {
		if *p.proxy, err = harness.StartCountingProxy(p.target, p.classify); err != nil {
			b.Fatal(err)
		}
		b.Cleanup((*p.proxy).Close)
	}

	// The admins' part, as the README tells it.
	if err := harness.AdminSetup(ctx, f.c, f.cluster.Config, f.vault, f.keycloak, operatorNamespace, "vko-fleet-operator"); err != nil {
		b.Fatal(err)
	}
	if f.tokenPath, f.saToken, err = harness.OperatorIdentity(ctx, f.c, f.cluster.Config, f.vault, operatorNamespace, operatorSA, f.dir); err != nil {
		b.Fatal(err)
	}

	var creds corev1.Secret
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: "prod-keycloak-credentials"}, &creds); err != nil {
		b.Fatal(err)
	}
	f.secrets = append(f.secrets, f.saToken, string(creds.Data["clientSecret"]), f.vault.Token, f.keycloak.Password)

	grant := secretsv1beta1.AccessGrant{Namespaces: grantedNamespaces(), Realms: []string{clientRealm}, ClientIDs: []string{"fleet-*"}}
	parallel(b, shape.Namespaces, 16, func(i int) error {
		return f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName(i)}})
	})
	var kc *harness.KeycloakAdmin
	for i := range shape.Clients {
		if i%25 == 0 { // the master realm's tokens live a minute
			if kc, err = f.keycloak.Admin(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if err := kc.CreateClient(ctx, clientRealm, clientOf(i), ""); err != nil {
			b.Fatal(err)
		}
		secret, err := kc.ClientSecret(ctx, clientRealm, clientOf(i))
		if err != nil {
			b.Fatal(err)
		}
		f.secrets = append(f.secrets, secret)
	}
	server := &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: serverName},
		Spec: secretsv1beta1.KeycloakServerSpec{
			URL: f.keycloakProxy.URL, Realm: "master", AuthType: secretsv1beta1.AuthType("ClientCredentials"),
			CredentialsSecretRef: secretsv1beta1.SecretReference{Name: "prod-keycloak-credentials"},
			Access:               []secretsv1beta1.AccessGrant{grant},
		},
	}
	// Created with the manager serving the webhooks (as standby).
	f.holdLease(b)
	f.startManager(b, defaultWorkers)
	if err := f.c.Create(ctx, server); err != nil {
		b.Fatal(err)
	}
	// The VaultApps are spread over two VaultServers, as the README sets
	// them up (the default one takes those that name none).
	for _, v := range []*vaultv1beta1.VaultServer{vaultServer(vaultServerA, f.vaultProxy.URL), vaultServer(vaultServerB, f.vaultProxyB.URL)} {
		if err := f.c.Create(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
	f.createUnrelatedSecrets(b)
	return f
}

// createUnrelatedSecrets fills the cluster with Secrets the operator has
// nothing to do with (1 KiB each): its cache must not hold them.
func (f *fleet) createUnrelatedSecrets(b *testing.B) {
	payload := strings.Repeat("x", 1024)
	parallel(b, shape.Unrelated, 16, func(i int) error {
		return f.c.Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%05d", i), Namespace: nsName(i)},
			StringData: map[string]string{"payload": payload},
		})
	})
}

// startManager (re)starts the manager binary with workers reconciles per
// kind, as a user deploys it, behind the counting proxies.
func (f *fleet) startManager(b *testing.B, workers int) {
	b.Helper()
	f.stopManager()
	f.managers++
	m, err := f.cluster.StartManager(context.Background(), fmt.Sprintf("manager-%02d", f.managers),
		nil,
		"--operator-namespace="+operatorNamespace,
		"--vault-service-account-token-path="+f.tokenPath,
		fmt.Sprintf("--max-concurrent-reconciles=%d", workers))
	if err != nil {
		b.Fatal(err)
	}
	f.manager = m
	f.all = append(f.all, m)
}

func (f *fleet) stopManager() {
	if f.manager != nil {
		f.manager.Stop()
		f.manager = nil
	}
}

// holdLease makes the bench the leader: a manager started now serves the
// webhooks and reconciles nothing, as a standby.
func (f *fleet) holdLease(b *testing.B) {
	b.Helper()
	if err := harness.HoldLeaderLease(context.Background(), f.c, operatorNamespace, "bench"); err != nil {
		b.Fatal(err)
	}
}

func (f *fleet) releaseLease(b *testing.B) {
	b.Helper()
	if err := harness.ReleaseLeaderLease(context.Background(), f.c, operatorNamespace); err != nil {
		b.Fatal(err)
	}
}

// leaseHolder is who holds the leader election lease now.
func (f *fleet) leaseHolder(b *testing.B) string {
	b.Helper()
	holder, err := harness.LeaderLeaseHolder(context.Background(), f.c, operatorNamespace)
	if err != nil {
		b.Fatal(err)
	}
	return holder
}

// waitLeader waits until a manager holds the lease.
func (f *fleet) waitLeader(b *testing.B) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if holder, err := harness.LeaderLeaseHolder(context.Background(), f.c, operatorNamespace); err == nil && holder != "bench" && holder != "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatalf("no manager took the lease within a minute; log:\n%s", f.manager.LogTail(30))
}

// The two VaultServers the fleet's VaultApps are spread over: one Vault
// behind two addresses (counting proxies), so that each has its own client,
// login and outage probe in the manager.
const (
	vaultServerA = "fleet-vault-a"
	vaultServerB = "fleet-vault-b"
	// vaultServers is how many the manager logs in to.
	vaultServers = 2
)

func vaultServer(name, address string) *vaultv1beta1.VaultServer {
	s := &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: vaultv1beta1.VaultServerSpec{
			Address: address,
			Login:   vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes", Role: "vault-keycloak-operator"}},
			AppAuth: vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes"}}},
			Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"fleet-*"}, Paths: []vaultv1beta1.VaultPathGrant{
				{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{vaultv1beta1.CapabilityRead, vaultv1beta1.CapabilityList}}}}},
		},
	}
	if name == vaultServerA {
		s.Annotations = map[string]string{vaultv1beta1.DefaultServerAnnotation: "true"}
	}
	return s
}

// vaultApp is the i-th VaultApp of a run: even ones on the default
// VaultServer, odd ones naming the other.
func vaultApp(run string, i int) *vaultv1beta1.VaultApp {
	app := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%04d", run, i), Namespace: nsName(i), Labels: map[string]string{runLabel: run}},
		Spec: vaultv1beta1.VaultAppSpec{
			Policy:          vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{{Path: "app/*", Capabilities: []vaultv1beta1.Capability{vaultv1beta1.CapabilityRead}}}},
			RefreshInterval: &metav1.Duration{Duration: shape.Refresh},
		},
	}
	if i%2 == 1 {
		app.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: vaultServerB}
	}
	return app
}

// vaultCounts are the manager's Vault requests through both VaultServers'
// addresses, by class.
func (f *fleet) vaultCounts() map[string]int {
	out := f.vaultProxy.Counts()
	for class, n := range f.vaultProxyB.Counts() {
		out[class] += n
	}
	return out
}

// vaultStatuses is how many of the manager's Vault requests got code.
func (f *fleet) vaultStatuses(code int) int {
	return f.vaultProxy.Statuses()[code] + f.vaultProxyB.Statuses()[code]
}

func credential(run string, i int) *secretsv1beta1.KeycloakClientCredential {
	ns := nsName(i)
	return &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%04d", run, i), Namespace: ns, Labels: map[string]string{runLabel: run}},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source:          secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: serverName}, Realm: clientRealm, ClientID: clientOf(i)},
			Target:          secretsv1beta1.TargetSpec{SecretName: fmt.Sprintf("%s-%04d", run, i)},
			RefreshInterval: &metav1.Duration{Duration: shape.Refresh},
		},
	}
}

// parallel runs do(0..n-1) on workers goroutines and fails on the first error.
func parallel(b *testing.B, n, workers int, do func(i int) error) {
	b.Helper()
	if err := parallelErr(n, workers, do); err != nil {
		b.Fatal(err)
	}
}

// parallelErr is parallel for a goroutine that is not the benchmark's own.
func parallelErr(n, workers int, do func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error {
			if err := do(i); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// waitCredentialsReady polls until n KeycloakClientCredentials of a run are
// Ready (setup, not timed).
func (f *fleet) waitCredentialsReady(b *testing.B, run string, n int, timeout time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var list secretsv1beta1.KeycloakClientCredentialList
		if err := f.c.List(context.Background(), &list, client.MatchingLabels{runLabel: run}); err != nil {
			b.Fatal(err)
		}
		count := 0
		for _, k := range list.Items {
			if harness.ReadyFor(k.Status.Conditions, k.Generation) {
				count++
			}
		}
		if count == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d KeycloakClientCredentials Ready after %s; manager log:\n%s", count, n, timeout, f.manager.LogTail(20))
		}
		time.Sleep(2 * time.Second)
	}
}

// createCredentials creates the fleet's KeycloakClientCredentials, one
// Secret each, waits for them to be Ready, and gives P4's bare repairer its
// copies of the Secrets it will edit.
func (f *fleet) createCredentials(b *testing.B) {
	b.Helper()
	parallel(b, shape.Size, creators, func(i int) error { return f.c.Create(context.Background(), credential("fleet", i)) })
	f.waitCredentialsReady(b, "fleet", shape.Size, 5*time.Minute)
	f.createBareSecrets(b)
}

// memoryDir is where the fleet's control plane keeps its files (etcd's
// data, the audit log, the managers' logs): in memory (/dev/shm) when the
// machine has it. On disk, the page cache's writeback stalled etcd's
// fsyncs for up to a second at a time under the bench's writes: every
// write in flight waited together, and P4's slowest repairs (edited and
// deleted alike, to the millisecond) measured the disk, not the operator.
func memoryDir(b *testing.B) string {
	b.Helper()
	// A small /dev/shm (a container's default is 64 MiB) would fill up.
	var fs syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &fs); err == nil && fs.Bavail*uint64(fs.Bsize) >= 4<<30 {
		if dir, err := os.MkdirTemp("/dev/shm", "vko-bench-"); err == nil {
			b.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	b.Log("no /dev/shm with 4 GiB free: the control plane keeps its files on disk")
	return b.TempDir()
}
