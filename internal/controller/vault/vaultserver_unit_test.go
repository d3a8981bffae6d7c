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

package vault

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient/vaultfake"
)

// fakeChecker answers a check as told.
type fakeChecker struct {
	*vaultfake.Vault
	product, version string
	err              error
}

func (f *fakeChecker) Check(context.Context) (vaultclient.ServerInfo, error) {
	return vaultclient.ServerInfo{Product: f.product, Version: f.version}, f.err
}

// registrations is the Vault registrations go to: an empty one for a
// checker made without.
func (f *fakeChecker) registrations() *vaultfake.Vault {
	if f.Vault == nil {
		f.Vault = vaultfake.New()
	}
	return f.Vault
}

func (f *fakeChecker) ReadRegistration(ctx context.Context, cluster string) (vaultclient.Registration, bool, error) {
	return f.registrations().ReadRegistration(ctx, cluster)
}

func (f *fakeChecker) WriteRegistration(ctx context.Context, r vaultclient.Registration) error {
	return f.registrations().WriteRegistration(ctx, r)
}

func (f *fakeChecker) DeleteRegistration(ctx context.Context, cluster string) error {
	return f.registrations().DeleteRegistration(ctx, cluster)
}

func (f *fakeChecker) ListRegistrations(ctx context.Context) ([]string, error) {
	return f.registrations().ListRegistrations(ctx)
}

func centralVault() *vaultv1beta1.VaultServer {
	return &vaultv1beta1.VaultServer{
		ObjectMeta: metav1.ObjectMeta{Name: "central", Generation: 1},
		Spec: vaultv1beta1.VaultServerSpec{
			Address:   "https://vault.example.com:8200",
			Namespace: "team-platform",
			Login:     vaultv1beta1.VaultLogin{Kubernetes: &vaultv1beta1.VaultRoleLogin{Mount: "kubernetes-eu-1", Role: "vko"}},
			AppAuth:   vaultv1beta1.VaultAuthMethod{Kubernetes: &vaultv1beta1.VaultKubernetesAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "kubernetes-eu-1"}}},
		},
	}
}

func TestConfigOfVaultServer(t *testing.T) {
	base := vaultclient.ConfigFromEnv()
	base.Token = "from-the-environment"
	cfg := ConfigOf(base, centralVault(), []byte("PEM"))
	want := base
	want.Address, want.Namespace, want.CACert, want.Token = "https://vault.example.com:8200", "team-platform", []byte("PEM"), ""
	want.AuthMount, want.AuthRole, want.KubernetesAuthMount, want.KVMount, want.KVPath, want.Isolated = "kubernetes-eu-1", "vko", "kubernetes-eu-1", "secret", "{namespace}", true
	if fmt.Sprint(cfg) != fmt.Sprint(want) {
		t.Fatalf("ConfigOf = %+v\nwant %+v", cfg, want)
	}
}

// JWT app roles bind the issuer the VaultServer names, else this cluster's
// (the operator's own token's); Kubernetes-auth roles none; an issuer that
// cannot be told fails the client, naming the field.
func TestAppRoleIssuer(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://cluster-a.example.com","sub":"system:serviceaccount:vko:manager"}`))
	if err := os.WriteFile(token, []byte("e30."+payload+".sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	own := &ServiceAccountTokens{TokenPath: token}
	jwt := centralVault()
	jwt.Spec.AppAuth = vaultv1beta1.VaultAuthMethod{JWT: &vaultv1beta1.VaultJWTAuthMount{VaultAuthMount: vaultv1beta1.VaultAuthMount{Mount: "jwt"}, Audience: "apps"}}
	named := jwt.DeepCopy()
	named.Spec.AppAuth.JWT.Issuer = "https://named.example.com"
	missing := &ServerClients{Issuer: (&ServiceAccountTokens{TokenPath: filepath.Join(dir, "none")}).Issuer}
	for _, tt := range []struct {
		name    string
		clients *ServerClients
		server  *vaultv1beta1.VaultServer
		want    string
		err     string
	}{
		{"this cluster's", &ServerClients{Issuer: own.Issuer}, jwt, "https://cluster-a.example.com", ""},
		{"the server's", &ServerClients{Issuer: own.Issuer}, named, "https://named.example.com", ""},
		{"Kubernetes auth binds none", &ServerClients{Issuer: own.Issuer}, centralVault(), "", ""},
		{"the server's, though no token is mounted", missing, named, "https://named.example.com", ""},
		{"no token mounted", missing, jwt, "", "set spec.appAuth.jwt.issuer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.clients.AppRoleIssuer(tt.server)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("AppRoleIssuer = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestVaultServerConnection(t *testing.T) {
	refused := &vaultapi.ResponseError{StatusCode: 403, Errors: []string{"permission denied"}}
	for _, tt := range []struct {
		name      string
		server    func(*vaultv1beta1.VaultServer)
		secret    *corev1.Secret
		check     fakeChecker
		connected metav1.ConditionStatus
		reason    string
		message   string
	}{
		{"connected", nil, nil, fakeChecker{version: "1.21.0"}, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, "logged in to Vault 1.21.0 at https://vault.example.com:8200"},
		{"no answer", nil, nil, fakeChecker{err: fmt.Errorf("read health: %w", vaultclient.ErrUnavailable)}, metav1.ConditionFalse, vaultv1beta1.ReasonVaultUnavailable, "Vault does not answer"},
		{"login refused", nil, nil, fakeChecker{version: "1.21.0", err: refused}, metav1.ConditionFalse, vaultv1beta1.ReasonVaultError, "permission denied"},
		{"CA Secret missing", func(s *vaultv1beta1.VaultServer) {
			s.Spec.CASecretRef = &vaultv1beta1.SecretKeySelector{Name: "vault-ca"}
		}, nil,
			fakeChecker{version: "1.21.0"}, metav1.ConditionFalse, vaultv1beta1.ReasonCAInvalid, "read the CA Secret vko/vault-ca"},
		{"CA Secret without the key", func(s *vaultv1beta1.VaultServer) {
			s.Spec.CASecretRef = &vaultv1beta1.SecretKeySelector{Name: "vault-ca"}
		},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-ca", Namespace: "vko"}, Data: map[string][]byte{"other": []byte("x")}},
			fakeChecker{version: "1.21.0"}, metav1.ConditionFalse, vaultv1beta1.ReasonCAInvalid, `has no key "ca.crt"`},
		{"CA from its Secret", func(s *vaultv1beta1.VaultServer) {
			s.Spec.CASecretRef = &vaultv1beta1.SecretKeySelector{Name: "vault-ca"}
		},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-ca", Namespace: "vko"}, Data: map[string][]byte{"ca.crt": selfSignedPEM(t)}},
			fakeChecker{version: "1.21.0"}, metav1.ConditionTrue, vaultv1beta1.ReasonConnected, "logged in"},
		{"CA Secret that holds no certificate", func(s *vaultv1beta1.VaultServer) {
			s.Spec.CASecretRef = &vaultv1beta1.SecretKeySelector{Name: "vault-ca"}
		},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vault-ca", Namespace: "vko"}, Data: map[string][]byte{"ca.crt": []byte("not PEM")}},
			fakeChecker{version: "1.21.0"}, metav1.ConditionFalse, vaultv1beta1.ReasonCAInvalid, "holds no PEM-encoded certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := centralVault()
			if tt.server != nil {
				tt.server(server)
			}
			scheme := runtime.NewScheme()
			_ = corev1.AddToScheme(scheme)
			_ = vaultv1beta1.AddToScheme(scheme)
			objs := []client.Object{server}
			if tt.secret != nil {
				objs = append(objs, tt.secret)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(server).Build()
			var built []vaultclient.Config
			recorder := events.NewFakeRecorder(10)
			r := &VaultServerReconciler{
				Client: c, Recorder: recorder, ClusterUID: "uid-1",
				Clients: &ServerClients{Reader: c, Namespace: "vko", New: func(cfg vaultclient.Config) (ServerClient, error) {
					built = append(built, cfg)
					return &tt.check, nil
				}},
			}
			for range 2 {
				_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "central"}})
				if (err == nil) != (tt.connected == metav1.ConditionTrue) {
					t.Fatalf("reconcile error %v with Connected %s", err, tt.connected)
				}
			}
			var got vaultv1beta1.VaultServer
			if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &got); err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{vaultv1beta1.TypeConnected, vaultv1beta1.TypeReady} {
				cond := meta.FindStatusCondition(got.Status.Conditions, typ)
				if cond == nil || cond.Status != tt.connected || cond.Reason != tt.reason || !strings.Contains(cond.Message, tt.message) {
					t.Fatalf("%s = %+v, want %s/%s saying %q", typ, cond, tt.connected, tt.reason, tt.message)
				}
			}
			if got.Status.Cluster != "uid-1" {
				t.Errorf("status.cluster = %q, want the kube-system UID", got.Status.Cluster)
			}
			if tt.check.version != "" && tt.reason != vaultv1beta1.ReasonCAInvalid && got.Status.Version != tt.check.version {
				t.Errorf("status.version = %q", got.Status.Version)
			}
			if len(built) > 1 {
				t.Errorf("built %d clients for one unchanged server: a check must not be a login", len(built))
			}
			if len(recorder.Events) != 1 {
				t.Errorf("%d Events for one change of condition, want 1", len(recorder.Events))
			}
		})
	}
}

// selfSignedPEM is a CA certificate made for the test.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// A VaultServer with deletionPolicy Delete keeps a finalizer; deleted, it
// goes only once the policies and roles this cluster wrote there for
// VaultApps are removed. Another cluster's, a retained one and one the
// operator did not write stay.
func TestVaultServerDeletionPolicyDelete(t *testing.T) {
	server := centralVault()
	server.Spec.Cluster, server.Spec.DeletionPolicy = "eu-1", vaultv1beta1.DeletionPolicyDelete
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = vaultv1beta1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(server).WithStatusSubresource(server).Build()
	vault := vaultfake.New()
	ours := vaultclient.Owner{Namespace: "shop", Name: "api", UID: "1", Cluster: "eu-1"}
	vault.Policies["app.shop.api"] = vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, ours, nil)
	vault.Roles["app.shop.api"] = vaultclient.Role{ServiceAccounts: []string{"api"}, Namespace: "shop", Policies: []string{"app.shop.api"}}
	vault.Policies["app.shop.web"] = vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "web", UID: "2", Cluster: "us-1"}, nil)
	vault.Policies["app.shop.kept"] = vaultclient.RetainedText(vaultclient.RenderPolicy(vaultclient.KV{Mount: "secret"}, vaultclient.Owner{Namespace: "shop", Name: "kept", UID: "3", Cluster: "eu-1"}, nil),
		vaultclient.Owner{Namespace: "shop", Name: "kept", UID: "3", Cluster: "eu-1"})
	vault.Policies["app.shop.hand"] = `path "secret/data/shop/*" { capabilities = ["read"] }`
	r := &VaultServerReconciler{Client: c, Recorder: events.NewFakeRecorder(10), ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: c, New: func(vaultclient.Config) (ServerClient, error) {
			return &fakeChecker{Vault: vault, version: "1.21.0"}, nil
		}}}
	reconcile := func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "central"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	reconcile()
	var got vaultv1beta1.VaultServer
	if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &got); err != nil || len(got.Finalizers) != 1 {
		t.Fatalf("finalizers %v (%v)", got.Finalizers, err)
	}
	if _, ok := vault.Registrations["vko-cluster.eu-1"]; !ok || !meta.IsStatusConditionTrue(got.Status.Conditions, vaultv1beta1.TypeRegistered) {
		t.Fatalf("not registered at the check: %v, %+v", vault.Registrations, got.Status.Conditions)
	}
	if err := c.Delete(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if res := reconcile(); res.RequeueAfter == 0 {
		t.Fatal("released at once after a pass that removed something")
	}
	if _, ok := vault.Policies["app.shop.api"]; ok || len(vault.Roles) > 0 {
		t.Fatalf("this cluster's policy or role left: %v %v", vault.Policies, vault.Roles)
	}
	for _, kept := range []string{"app.shop.web", "app.shop.kept", "app.shop.hand"} {
		if _, ok := vault.Policies[kept]; !ok {
			t.Fatalf("%s removed", kept)
		}
	}
	reconcile()
	if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &got); err == nil {
		t.Fatalf("still there after a pass that found nothing: finalizers %v", got.Finalizers)
	}
	if len(vault.Registrations) > 0 {
		t.Fatalf("registration left after the cleanup: %v", vault.Registrations)
	}
}

// A burst of VaultApps written to a server recounts them without asking
// Vault again: the check runs once per ServerCheckInterval, or when the
// server changes.
func TestVaultServerRecountsWithoutAskingVault(t *testing.T) {
	server := centralVault()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = vaultv1beta1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(server).WithStatusSubresource(server).Build()
	checks := 0
	checker := &countingChecker{fakeChecker: fakeChecker{Vault: vaultfake.New(), version: "1.21.0"}, checks: &checks}
	r := &VaultServerReconciler{Client: c, Recorder: events.NewFakeRecorder(10), ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: c, New: func(vaultclient.Config) (ServerClient, error) { return checker, nil }}}
	var last ctrl.Result
	reconcile := func() {
		t.Helper()
		var err error
		if last, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "central"}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int32 {
		t.Helper()
		var got vaultv1beta1.VaultServer
		if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Status.VaultApps
	}
	r.CountInterval = time.Hour
	reconcile()
	for i := range 5 {
		app := shopAPI()
		app.Name = fmt.Sprintf("api-%d", i)
		app.Status.Server = "central"
		if err := c.Create(context.Background(), app); err != nil {
			t.Fatal(err)
		}
		reconcile()
	}
	// Within the count interval: no write, a reconcile when it is over.
	if n := count(); checks != 1 || n != 0 || last.RequeueAfter <= 0 || last.RequeueAfter > time.Hour {
		t.Fatalf("%d checks, %d VaultApps counted, requeued after %s; want 1, 0 and at most the interval", checks, n, last.RequeueAfter)
	}
	r.CountInterval = time.Nanosecond
	reconcile()
	if n := count(); checks != 1 || n != 5 {
		t.Fatalf("%d checks, %d VaultApps counted; want 1 and 5", checks, n)
	}
	var got vaultv1beta1.VaultServer
	if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &got); err != nil {
		t.Fatal(err)
	}
	got.Spec.Namespace = "team-other"
	got.Generation++
	if err := c.Update(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if checks != 2 {
		t.Fatalf("a changed server not checked again: %d checks", checks)
	}
}

type countingChecker struct {
	fakeChecker
	checks *int
}

func (c *countingChecker) Check(ctx context.Context) (vaultclient.ServerInfo, error) {
	*c.checks++
	return c.fakeChecker.Check(ctx)
}

// What a check reports, decided without I/O: the version stays through an
// outage but not through a change of server, Ready follows Connected, and
// only a change of the conditions is worth an Event.
func TestDecideServerStatus(t *testing.T) {
	s := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "eu", Generation: 1}, Spec: vaultv1beta1.VaultServerSpec{Address: "https://vault.eu:8200"}}
	st, ev := decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", info: vaultclient.ServerInfo{Product: vaultclient.ProductOpenBao, Version: "2.7.2"}, err: nil, apps: 3})
	ready := meta.FindStatusCondition(st.Conditions, vaultv1beta1.TypeReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || st.Product != "OpenBao" || st.Version != "2.7.2" || st.Cluster != "uid-1" || st.VaultApps != 3 || len(ev) != 1 || ev[0].eventType != corev1.EventTypeNormal ||
		!strings.Contains(ev[0].message, "logged in to OpenBao 2.7.2 at https://vault.eu:8200") {
		t.Fatalf("connected: %+v, event %+v", st, ev)
	}
	s.Status = st
	if _, again := decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", info: vaultclient.ServerInfo{Product: vaultclient.ProductOpenBao, Version: "2.7.2"}, err: nil, apps: 3}); again != nil {
		t.Fatalf("an unchanged check recorded %+v", again)
	}
	down := fmt.Errorf("read health: %w", vaultclient.ErrUnavailable)
	st, ev = decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", info: vaultclient.ServerInfo{}, err: down, apps: 3})
	ready = meta.FindStatusCondition(st.Conditions, vaultv1beta1.TypeReady)
	if ready.Status != metav1.ConditionFalse || ready.Reason != vaultv1beta1.ReasonVaultUnavailable || st.Version != "2.7.2" || st.Product != "OpenBao" || len(ev) != 1 || ev[0].eventType != corev1.EventTypeWarning {
		t.Fatalf("down: Ready %+v, version %q, event %+v; want the version kept and a Warning", ready, st.Version, ev)
	}
	s.Status, s.Generation = st, 2 // another server
	if st, _ = decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", info: vaultclient.ServerInfo{}, err: down, apps: 3}); st.Version != "" || st.Product != "" {
		t.Fatalf("version %q kept through a change of server", st.Version)
	}

	// Connected, but another cluster holds the name: not Ready, saying
	// why, and a Warning; Isolated reported beside, not in Ready.
	clash := &registrationOutcome{registered: verdict{false, vaultv1beta1.ReasonClusterNameClash, "the name eu-1 is registered by another cluster"},
		kv: &verdict{false, vaultv1beta1.ReasonKVShared, "cluster eu-2 keeps ..."}}
	st, ev = decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", info: vaultclient.ServerInfo{Version: "1.21.0"}, apps: 3, registration: clash})
	ready = meta.FindStatusCondition(st.Conditions, vaultv1beta1.TypeReady)
	if ready.Status != metav1.ConditionFalse || ready.Reason != vaultv1beta1.ReasonClusterNameClash || len(ev) != 3 ||
		ev[1].reason != vaultv1beta1.ReasonClusterNameClash || ev[1].eventType != corev1.EventTypeWarning || ev[2].reason != vaultv1beta1.ReasonKVShared {
		t.Fatalf("a clash: Ready %+v, events %+v", ready, ev)
	}
	// Registered, the KV shared: Ready all the same, with Connected's reason.
	s.Status = st
	shared := &registrationOutcome{registered: verdict{true, vaultv1beta1.ReasonRegistered, "registered"}, kv: clash.kv}
	st, ev = decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", info: vaultclient.ServerInfo{Version: "1.21.0"}, apps: 3, registration: shared})
	if ready = meta.FindStatusCondition(st.Conditions, vaultv1beta1.TypeReady); ready.Status != metav1.ConditionTrue || ready.Reason != vaultv1beta1.ReasonConnected || len(ev) != 1 {
		t.Fatalf("registered, the KV shared: Ready %+v, events %+v", ready, ev)
	}
	// A check that fails keeps the registration's conditions as they were.
	s.Status = st
	if st, _ = decideServerStatus(s, serverCheckOutcome{clusterUID: "uid-1", err: down, apps: 3}); !meta.IsStatusConditionTrue(st.Conditions, vaultv1beta1.TypeRegistered) {
		t.Fatalf("Registered dropped by a failed check: %+v", st.Conditions)
	}
}

// Where every VaultApp is read from the API server (a split cache), a
// check that fails keeps the last count instead of paging through every
// VaultApp at each retry; the next check that succeeds counts.
func TestVaultServerCountWaitsForACheckFromTheAPIServer(t *testing.T) {
	server := centralVault()
	server.Status.VaultApps = 7
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = vaultv1beta1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(server).WithStatusSubresource(server).Build()
	apps := &pagedVaultApps{n: 3}
	checker := &fakeChecker{Vault: vaultfake.New(), err: errors.New("connection refused")}
	r := &VaultServerReconciler{Client: c, Recorder: events.NewFakeRecorder(10), ClusterUID: "uid-1",
		Clients: &ServerClients{Reader: c, New: func(vaultclient.Config) (ServerClient, error) { return checker, nil }},
		Apps:    EveryVaultApp{Reader: apps, Paged: true}}
	for range 3 {
		_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "central"}})
	}
	if apps.lists != 0 {
		t.Errorf("three failed checks listed VaultApps %d times, want none", apps.lists)
	}
	var got vaultv1beta1.VaultServer
	if err := c.Get(context.Background(), client.ObjectKey{Name: "central"}, &got); err != nil || got.Status.VaultApps != 7 {
		t.Errorf("count after failed checks %d (%v), want the last one, 7", got.Status.VaultApps, err)
	}
	checker.err, checker.version = nil, "1.21.0"
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "central"}}); err != nil {
		t.Fatal(err)
	}
	if apps.lists != 1 {
		t.Errorf("a check that succeeded listed VaultApps %d times, want once", apps.lists)
	}
}
