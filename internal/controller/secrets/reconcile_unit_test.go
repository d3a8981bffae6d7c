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

package secrets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Nerzal/gocloak/v13"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak/keycloakfake"
	"github.com/carbogame/vault-keycloak-operator/internal/outage"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// grants of the test server: team-a reads team-a-* in realm apps, rotates
// team-a-rot, and reads all of master (protected clients stay out).
func testServer() *secretsv1beta1.KeycloakServer {
	return &secretsv1beta1.KeycloakServer{
		ObjectMeta: metav1.ObjectMeta{Name: "kc"},
		Spec: secretsv1beta1.KeycloakServerSpec{
			URL: "https://sso.test", AuthType: secretsv1beta1.AuthClientCredentials,
			Access: []secretsv1beta1.AccessGrant{
				{Namespaces: []string{"team-a"}, Realms: []string{"apps"}, ClientIDs: []string{"team-a-*"}},
				{Namespaces: []string{"team-a"}, Realms: []string{"apps"}, ClientIDs: []string{"team-a-rot"}, Rotate: true},
				{Namespaces: []string{"team-a"}, Realms: []string{"master"}, ClientIDs: []string{"*"}, Rotate: true},
			},
		},
	}
}

type kccWorld struct {
	t      *testing.T
	client client.Client
	kc     *keycloakfake.Server
	events *events.FakeRecorder
	r      *KeycloakClientCredentialReconciler
}

func newKCCWorld(t *testing.T, kcc *secretsv1beta1.KeycloakClientCredential, extra ...client.Object) *kccWorld {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	_ = secretsv1beta1.AddToScheme(scheme)
	objs := append([]client.Object{
		testServer(), kcc,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
	}, extra...)
	// One API server; the manager's cache shows only the Secrets the
	// operator labels, the others (a foreign Secret in the way) are seen
	// through the API reader, and writes go to the API server.
	// The API server gives each new object a UID; the fake does not.
	uids := 0
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&secretsv1beta1.KeycloakClientCredential{}).
		WithIndex(&secretsv1beta1.KeycloakClientCredential{}, serverRefIndex, serverRefOf).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetUID() == "" {
				uids++
				obj.SetUID(types.UID(fmt.Sprintf("uid-%d", uids)))
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	c := cachedView{reader}
	w := &kccWorld{t: t, client: reader, events: events.NewFakeRecorder(100), kc: &keycloakfake.Server{
		Login:   "vko-operator",
		Secrets: map[string]string{"apps/team-a-web": "s3cr3t", "apps/team-a-rot": "r0t", "apps/team-b-web": "other", "master/vko-operator": "op", "apps/team-a-masked": "**********"},
		// A realm that rotates with grace, as the README asks of it.
		Grace: keycloak.Grace{Offered: true, Lifetime: 48 * time.Hour}, PreviousExpires: time.Now().Add(48 * time.Hour),
	}}
	w.r = &KeycloakClientCredentialReconciler{Client: c, Reader: reader, Clients: &fakeClients{kc: w.kc}, Recorder: w.events}
	return w
}

// cachedView is the manager's client over the fake API server: its cache
// holds Secrets only when the operator's label is on them, as digests
// (DigestSecret). The tests read what the API server holds.
type cachedView struct{ client.Client }

func (c cachedView) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if s, ok := obj.(*corev1.Secret); ok {
		if s.Labels[ManagedByLabel] != ManagedByValue {
			return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
		}
		_, _ = DigestSecret(s)
	}
	return nil
}

func teamA(name, clientID string) *secretsv1beta1.KeycloakClientCredential {
	return &secretsv1beta1.KeycloakClientCredential{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Generation: 1, CreationTimestamp: metav1.Now()},
		Spec: secretsv1beta1.KeycloakClientCredentialSpec{
			Source: secretsv1beta1.CredentialSource{ServerRef: secretsv1beta1.ServerReference{Name: "kc"}, Realm: "apps", ClientID: clientID},
			Target: secretsv1beta1.TargetSpec{SecretName: name + "-creds", Keys: secretsv1beta1.SecretKeys{ClientID: "id", ClientSecret: "secret"}},
		},
	}
}

func (w *kccWorld) reconcile(name string) {
	w.t.Helper()
	// Errors are retried with backoff in the manager; here the outcome is
	// read from the status.
	_, _ = w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team-a", Name: name}})
}

func (w *kccWorld) ready(name string) *metav1.Condition {
	w.t.Helper()
	var k secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: name}, &k); err != nil {
		w.t.Fatal(err)
	}
	return meta.FindStatusCondition(k.Status.Conditions, secretsv1beta1.TypeReady)
}

// secret is the Secret the operator wrote at ns/name as the API server
// holds it; nil when there is none (or only someone else's).
func (w *kccWorld) secret(ns, name string) *corev1.Secret {
	var s corev1.Secret
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		w.t.Fatal(err)
	}
	if s.Labels[ManagedByLabel] != ManagedByValue {
		return nil
	}
	return &s
}

func TestCredentialReconcileDecisions(t *testing.T) {
	basicAuth := func(k *secretsv1beta1.KeycloakClientCredential) {
		k.Spec.Target.Type = corev1.SecretTypeBasicAuth
		k.Spec.Target.Keys = secretsv1beta1.SecretKeys{ClientID: corev1.BasicAuthUsernameKey, ClientSecret: corev1.BasicAuthPasswordKey}
	}
	tests := []struct {
		name     string
		kcc      *secretsv1beta1.KeycloakClientCredential
		mutate   func(*secretsv1beta1.KeycloakClientCredential)
		extra    []client.Object
		broken   bool     // the server's credentials Secret is unusable
		reason   string   // of Ready
		calls    []string // what Keycloak was asked
		secretIn string   // namespace where the Secret must be, "" for none
	}{
		{name: "granted client", kcc: teamA("web", "team-a-web"), reason: secretsv1beta1.ReasonSynced,
			calls: []string{"read apps/team-a-web"}, secretIn: "team-a"},
		{name: "another team's client: Keycloak is not asked", kcc: teamA("steal", "team-b-web"), reason: secretsv1beta1.ReasonAccessNotGranted},
		{name: "the operator's login client", kcc: teamA("login", "vko-operator"),
			mutate: func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Source.Realm = "master" }, reason: secretsv1beta1.ReasonAccessNotGranted},
		{name: "admin-cli", kcc: teamA("cli", "admin-cli"),
			mutate: func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Source.Realm = "master" }, reason: secretsv1beta1.ReasonAccessNotGranted},
		{name: "rotation without the grant", kcc: teamA("rot", "team-a-web"), mutate: func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
			k.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
		}, reason: secretsv1beta1.ReasonAccessNotGranted},
		{name: "rotation with the grant, due", kcc: teamA("rot", "team-a-rot"), mutate: func(k *secretsv1beta1.KeycloakClientCredential) {
			k.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
			k.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
		}, reason: secretsv1beta1.ReasonSynced, calls: []string{"grace apps", "state apps/team-a-rot", "regenerate apps/team-a-rot", "state apps/team-a-rot", "read apps/team-a-rot"}, secretIn: "team-a"},
		{name: "a spec the schema refuses", kcc: teamA("bounds", "team-a-web"), mutate: func(k *secretsv1beta1.KeycloakClientCredential) {
			for i := range 33 {
				k.Spec.Target.Namespaces = append(k.Spec.Target.Namespaces, fmt.Sprintf("ns-%d", i))
			}
		}, reason: secretsv1beta1.ReasonNotAllowed},
		{name: "target namespace without consent", kcc: teamA("cross", "team-a-web"),
			mutate: func(k *secretsv1beta1.KeycloakClientCredential) { k.Spec.Target.Namespaces = []string{"team-b"} },
			reason: secretsv1beta1.ReasonTargetNotAllowed, calls: []string{"read apps/team-a-web"}},
		{name: "a Secret type the namespace does not allow", kcc: teamA("typed", "team-a-web"), mutate: basicAuth,
			reason: secretsv1beta1.ReasonTargetNotAllowed, calls: []string{"read apps/team-a-web"}},
		{name: "a foreign Secret in the way", kcc: teamA("taken", "team-a-web"),
			extra:  []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "taken-creds", Namespace: "team-a"}, Data: map[string][]byte{"x": []byte("y")}}},
			reason: secretsv1beta1.ReasonSecretNotOwned, calls: []string{"read apps/team-a-web"}},
		{name: "unusable credentials, granted: said so", kcc: teamA("creds", "team-a-web"), broken: true, reason: secretsv1beta1.ReasonCredentialsInvalid},
		{name: "unusable credentials, another team's client: refused, nothing said of the credentials", kcc: teamA("creds", "team-b-web"), broken: true,
			reason: secretsv1beta1.ReasonAccessNotGranted},
		{name: "a masked secret is never written", kcc: teamA("masked", "team-a-masked"), reason: secretsv1beta1.ReasonNoUsableSecret,
			calls: []string{"read apps/team-a-masked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mutate != nil {
				tt.mutate(tt.kcc)
			}
			w := newKCCWorld(t, tt.kcc, tt.extra...)
			if tt.broken {
				w.r.Clients = &fakeClients{err: fmt.Errorf("%w: Secret has no \"clientSecret\" key", errCredentials)}
			}
			w.reconcile(tt.kcc.Name)
			if c := w.ready(tt.kcc.Name); c == nil || c.Reason != tt.reason {
				t.Fatalf("Ready = %+v, want reason %s", c, tt.reason)
			}
			if !slices.Equal(w.kc.Calls, tt.calls) {
				t.Fatalf("Keycloak was asked %v, want %v", w.kc.Calls, tt.calls)
			}
			for _, ns := range []string{"team-a", "team-b"} {
				if s := w.secret(ns, tt.kcc.Spec.Target.SecretName); (s != nil) != (ns == tt.secretIn) {
					t.Fatalf("Secret in %s: %v, want only in %q", ns, s != nil, tt.secretIn)
				}
			}
		})
	}
}

func TestGrantTakenBackLeavesTheSecretAsItWas(t *testing.T) {
	w := newKCCWorld(t, teamA("web", "team-a-web"))
	w.reconcile("web")
	written := w.secret("team-a", "web-creds")
	if written == nil || string(written.Data["secret"]) != "s3cr3t" {
		t.Fatalf("Secret = %v", written)
	}
	var s secretsv1beta1.KeycloakServer
	_ = w.client.Get(context.Background(), client.ObjectKey{Name: "kc"}, &s)
	s.Spec.Access = s.Spec.Access[1:]
	if err := w.client.Update(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	w.kc.Calls = nil
	w.reconcile("web")
	if c := w.ready("web"); c.Reason != secretsv1beta1.ReasonAccessNotGranted || !strings.Contains(c.Message, `client "team-a-web" in realm "apps" is not granted`) {
		t.Fatalf("Ready = %+v", c)
	}
	if len(w.kc.Calls) > 0 {
		t.Fatalf("Keycloak asked %v after the grant was taken back", w.kc.Calls)
	}
	if after := w.secret("team-a", "web-creds"); after == nil || string(after.Data["secret"]) != "s3cr3t" {
		t.Fatal("the Secret was removed or blanked")
	}
}

func TestSecretTypeAllowedByTheTargetNamespace(t *testing.T) {
	k := teamA("typed", "team-a-web")
	k.Spec.Target.Type = corev1.SecretTypeBasicAuth
	k.Spec.Target.Keys = secretsv1beta1.SecretKeys{ClientID: corev1.BasicAuthUsernameKey, ClientSecret: corev1.BasicAuthPasswordKey}
	w := newKCCWorld(t, k)
	var ns corev1.Namespace
	_ = w.client.Get(context.Background(), client.ObjectKey{Name: "team-a"}, &ns)
	ns.Annotations = map[string]string{tenancy.AllowedSecretTypesAnnotation: string(corev1.SecretTypeBasicAuth)}
	_ = w.client.Update(context.Background(), &ns)
	w.reconcile("typed")
	if s := w.secret("team-a", "typed-creds"); s == nil || s.Type != corev1.SecretTypeBasicAuth || string(s.Data[corev1.BasicAuthPasswordKey]) != "s3cr3t" {
		t.Fatalf("Secret = %v", s)
	}
}

// A target Secret edited by hand is restored from the secret read in the
// last refresh, without asking Keycloak; a refresh that is due, or a spec
// change, reads Keycloak again.
func TestARepairWithinTheRefreshIntervalDoesNotAskKeycloak(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	kcc.Spec.RefreshInterval = &metav1.Duration{Duration: time.Minute}
	w := newKCCWorld(t, kcc)
	now := time.Now()
	w.r.Now = func() time.Time { return now }
	reads := func() int {
		n := 0
		for _, c := range w.kc.Calls {
			if strings.HasPrefix(c, "read ") {
				n++
			}
		}
		return n
	}
	res, _ := w.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(kcc)})
	if reads() != 1 {
		t.Fatalf("first reconcile: %d reads", reads())
	}
	// The first refresh is spread past the interval (shared.Refresh); the
	// secret read now serves repairs until then, not one interval flat.
	if res.RequeueAfter < time.Minute {
		t.Fatalf("first refresh after %s, want at least the interval", res.RequeueAfter)
	}
	edit := func() {
		s := w.secret("team-a", "web-creds")
		s.Data["secret"] = []byte("edited by hand")
		if err := w.client.Update(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	edit()
	now = now.Add(30 * time.Second)
	w.reconcile("web")
	if got := string(w.secret("team-a", "web-creds").Data["secret"]); got != "s3cr3t" || reads() != 1 {
		t.Fatalf("repair within the interval: secret restored %v, %d reads of Keycloak (want 1)", got == "s3cr3t", reads())
	}
	edit()
	now = now.Add(res.RequeueAfter - 30*time.Second - time.Millisecond)
	w.reconcile("web")
	if got := string(w.secret("team-a", "web-creds").Data["secret"]); got != "s3cr3t" || reads() != 1 {
		t.Fatalf("repair just before the scheduled refresh (%s): secret restored %v, %d reads of Keycloak (want 1)", res.RequeueAfter, got == "s3cr3t", reads())
	}
	w.kc.Secrets["apps/team-a-web"] = "regenerated"
	now = now.Add(time.Millisecond)
	w.reconcile("web")
	if got := string(w.secret("team-a", "web-creds").Data["secret"]); got != "regenerated" || reads() != 2 {
		t.Fatalf("a due refresh: regenerated secret propagated %v, %d reads (want 2)", got == "regenerated", reads())
	}
	var current secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(context.Background(), client.ObjectKeyFromObject(kcc), &current); err != nil {
		t.Fatal(err)
	}
	current.Generation++ // a spec change
	if err := w.client.Update(context.Background(), &current); err != nil {
		t.Fatal(err)
	}
	w.reconcile("web")
	if reads() != 3 {
		t.Fatalf("after a spec change: %d reads, want 3", reads())
	}
}

// A Keycloak server that does not answer leaves the written Secret as it
// was, says KeycloakUnavailable, and the resource waits for that server;
// a server that refuses (an unknown client) is not waited for.
func TestKeycloakThatDoesNotAnswerIsWaitedFor(t *testing.T) {
	w := newKCCWorld(t, teamA("web", "team-a-web"))
	w.r.Outage = outage.New(time.Hour)
	w.reconcile("web")
	w.kc.Down = fmt.Errorf("%w: %w", keycloak.ErrUnavailable, &gocloak.APIError{Code: 0, Message: "could not get client secret: dial tcp 127.0.0.1:8080: connect: connection refused"})
	w.r.recent.forget(client.ObjectKey{Namespace: "team-a", Name: "web"}) // as when the refresh is due
	w.reconcile("web")
	if c := w.ready("web"); c.Reason != secretsv1beta1.ReasonKeycloakUnavailable || !strings.Contains(c.Message, "does not answer") {
		t.Fatalf("Ready = %+v, want KeycloakUnavailable", c)
	}
	if s := w.secret("team-a", "web-creds"); s == nil || string(s.Data["secret"]) != "s3cr3t" {
		t.Fatalf("the Secret was removed or blanked while Keycloak was down: %v", s)
	}
	if got := w.r.Outage.Held("keycloak/kc"); got != 1 {
		t.Fatalf("%d resources wait for keycloak/kc, want 1", got)
	}

	w.kc.Down = nil
	other := newKCCWorld(t, teamA("gone", "team-a-gone"))
	other.r.Outage = outage.New(time.Hour)
	other.reconcile("gone")
	if c := other.ready("gone"); c.Reason != secretsv1beta1.ReasonClientNotFound {
		t.Fatalf("Ready = %+v, want ClientNotFound", c)
	}
	if got := other.r.Outage.Held("keycloak/kc"); got != 0 {
		t.Fatalf("a refusal made %d resources wait for the server", got)
	}
}

// A Secret this process re-created is its own even while the status read
// back still records the deleted one: the Secret's watch event often comes
// before the status write reaches the cache.
func TestARecreatedSecretIsOwnedBeforeItsStatusIsReadBack(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	w := newKCCWorld(t, kcc)
	ctx := context.Background()
	w.reconcile("web")
	var stale secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(ctx, client.ObjectKeyFromObject(kcc), &stale); err != nil || len(stale.Status.Secrets) != 1 {
		t.Fatalf("first pass recorded %v (%v)", stale.Status.Secrets, err)
	}
	if err := w.client.Delete(ctx, w.secret("team-a", "web-creds")); err != nil {
		t.Fatal(err)
	}
	w.reconcile("web") // re-created, and recorded
	var now secretsv1beta1.KeycloakClientCredential
	if err := w.client.Get(ctx, client.ObjectKeyFromObject(kcc), &now); err != nil {
		t.Fatal(err)
	}
	if now.Status.Secrets[0].UID == stale.Status.Secrets[0].UID {
		t.Fatal("the re-created Secret's UID was not recorded")
	}
	// The cache still shows the status before that write.
	now.Status = stale.Status
	if err := w.client.Status().Update(ctx, &now); err != nil {
		t.Fatal(err)
	}
	w.reconcile("web")
	if c := w.ready("web"); c == nil || c.Reason != secretsv1beta1.ReasonSynced {
		t.Fatalf("Ready = %+v: the Secret this process created counted as not the operator's", c)
	}
}

// A repair's own write comes back through the watch; that echo queues no
// second pass. Anyone's later write, and a deletion, still do.
func TestTheEchoOfARepairQueuesNoPass(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	w := newKCCWorld(t, kcc)
	ctx := context.Background()
	pass := w.r.echoes.notEchoes()
	w.reconcile("web") // created
	created := w.secret("team-a", "web-creds")
	if pass.Create(event.CreateEvent{Object: created}) {
		t.Fatal("the Secret's own creation queued the resource again")
	}

	edited := created.DeepCopy()
	edited.Data["secret"] = []byte("edited by hand")
	if err := w.client.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	if !pass.Update(event.UpdateEvent{ObjectOld: created, ObjectNew: edited}) {
		t.Fatal("an edit by hand queued nothing")
	}
	w.reconcile("web") // repaired
	repaired := w.secret("team-a", "web-creds")
	if string(repaired.Data["secret"]) != "s3cr3t" {
		t.Fatal("not repaired")
	}
	if pass.Update(event.UpdateEvent{ObjectOld: edited, ObjectNew: repaired}) {
		t.Fatal("the repair's own write queued the resource again")
	}
	if !pass.Update(event.UpdateEvent{ObjectOld: edited, ObjectNew: repaired}) {
		t.Fatal("an echo is dropped once; the same version seen again (a resync) passes")
	}
	if !pass.Delete(event.DeleteEvent{Object: repaired}) {
		t.Fatal("a deletion of the Secret queued nothing")
	}
}

// echoFirst is an API server whose watch event of a create reaches the
// manager before the create's response does.
type echoFirst struct {
	client.Client
	deliver func(client.Object)
}

func (c echoFirst) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	c.deliver(obj.DeepCopyObject().(client.Object))
	return nil
}

// The watch event of a Secret the pass creates can come before the create
// returns: it is the pass's own echo all the same, and queues no second
// pass (which read a cache without the pass's status write and failed on
// the conflict: bench-scale at 50,000).
func TestTheEchoOfACreateThatComesFirstQueuesNoPass(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	w := newKCCWorld(t, kcc)
	pass := w.r.echoes.notEchoes()
	queued := 0
	w.r.Client = echoFirst{Client: w.r.Client, deliver: func(o client.Object) {
		if pass.Create(event.CreateEvent{Object: o}) {
			queued++
		}
	}}
	w.reconcile("web")
	if s := w.secret("team-a", "web-creds"); s == nil {
		t.Fatal("no Secret created")
	}
	if queued != 0 {
		t.Fatal("the echo of the pass's own create, come before its response, queued the resource again")
	}
	if s := w.secret("team-a", "web-creds"); !pass.Create(event.CreateEvent{Object: s}) {
		t.Fatal("the echo was remembered past its arrival: a later create event of the name (a relist) was dropped")
	}
}

// A watch that broke while the pass created its Secret shows, once it
// lists again, only the Secret's latest version: an edit made before the
// create's answer came. The pass reads the Secret again and repairs it.
func TestAnEditBeforeTheCreatesAnswerIsRepaired(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	w := newKCCWorld(t, kcc)
	ctx := context.Background()
	pass := w.r.echoes.notEchoes()
	queued := 0
	w.r.Client = echoFirst{Client: w.r.Client, deliver: func(o client.Object) {
		edited := o.(*corev1.Secret).DeepCopy()
		edited.Data["secret"] = []byte("edited by hand")
		if err := w.client.Update(ctx, edited); err != nil {
			t.Fatal(err)
		}
		if pass.Create(event.CreateEvent{Object: edited}) {
			queued++
		}
	}}
	w.reconcile("web")
	if s := w.secret("team-a", "web-creds"); s == nil || string(s.Data["secret"]) != "s3cr3t" {
		t.Fatalf("the Secret edited before the create's answer was not repaired in that pass (queued again: %d)", queued)
	}
}

// A resource the webhook never defaulted (it was down, or an earlier
// release stored it) is read in the defaulted view the webhook gives.
func TestAnUndefaultedResourceIsReadAsTheWebhookDefaultsIt(t *testing.T) {
	kcc := teamA("web", "team-a-web")
	kcc.Spec.Target.Keys = secretsv1beta1.SecretKeys{}
	w := newKCCWorld(t, kcc)
	w.reconcile("web")
	s := w.secret("team-a", "web-creds")
	if s == nil || string(s.Data[secretsv1beta1.DefaultClientSecretKey]) != "s3cr3t" || string(s.Data[secretsv1beta1.DefaultClientIDKey]) != "team-a-web" {
		t.Fatalf("Secret = %v, want the default keys", s)
	}
}

// Two resources read one client; one rotates it. The other must not
// restore the secret the rotation replaced from what it remembers.
func TestARotationIsNotUndoneByAnotherResourceOfTheSameClient(t *testing.T) {
	rot := teamA("rot", "team-a-rot")
	rot.Spec.Rotation = &secretsv1beta1.RotationSpec{Interval: metav1.Duration{Duration: time.Hour}}
	rot.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
	reader := teamA("reader", "team-a-rot")
	w := newKCCWorld(t, rot, reader)
	w.reconcile("reader") // remembers "r0t"
	w.reconcile("rot")    // regenerates: "r0t-rotated"
	s := w.secret("team-a", "reader-creds")
	s.Data["secret"] = []byte("edited by hand")
	if err := w.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	w.reconcile("reader") // a repair
	if got := string(w.secret("team-a", "reader-creds").Data["secret"]); got != "r0t-rotated" {
		t.Fatalf("the repair wrote %q, want the rotated secret", got)
	}
}
