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

package v1beta1

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

func validator(annotations map[string]string) *VaultAppValidator {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = vaultv1beta1.AddToScheme(scheme)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Annotations: annotations}}
	teams := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "teams"},
		Spec: vaultv1beta1.VaultServerSpec{Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"team-*"}}}}}
	shops := &vaultv1beta1.VaultServer{ObjectMeta: metav1.ObjectMeta{Name: "shops"},
		Spec: vaultv1beta1.VaultServerSpec{Access: []vaultv1beta1.VaultAccessGrant{{Namespaces: []string{"shop"}, Paths: []vaultv1beta1.VaultPathGrant{
			{Template: "secret/data/{namespace}/*", Capabilities: []vaultv1beta1.Capability{"read", "list"}}}}}}}
	return &VaultAppValidator{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(ns, teams, shops).Build()}
}

func app(mutate func(*vaultv1beta1.VaultApp)) *vaultv1beta1.VaultApp {
	a := &vaultv1beta1.VaultApp{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"},
		Spec: vaultv1beta1.VaultAppSpec{Policy: vaultv1beta1.PolicySpec{Rules: []vaultv1beta1.PolicyRule{
			{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}}}}},
	}
	if mutate != nil {
		mutate(a)
	}
	return a
}

// v1alpha1Request is the context of a request the user sent as v1alpha1.
func v1alpha1Request() context.Context {
	return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		RequestKind: &metav1.GroupVersionKind{Group: "vault.exemple.com", Version: "v1alpha1", Kind: "VaultApp"},
	}})
}

func TestVaultAppAdmissionMessages(t *testing.T) {
	const prefix = `VaultApp.vault.exemple.com "api" is invalid: `
	tests := []struct {
		name        string
		ctx         context.Context
		annotations map[string]string
		app         *vaultv1beta1.VaultApp
		want        string // "" when admitted
	}{
		{"within the grant", context.Background(), nil, app(nil), ""},
		{"capability not granted", context.Background(), nil,
			app(func(a *vaultv1beta1.VaultApp) {
				a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "delete"}
			}),
			prefix + `spec.policy.rules[0].capabilities: Forbidden: delete not allowed in namespace "shop": it may use read, list (the cluster admin sets this in the namespace's vault.exemple.com/allowed-capabilities annotation)`},
		{"the same, named in v1alpha1 terms", v1alpha1Request(), nil,
			app(func(a *vaultv1beta1.VaultApp) {
				a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"read", "delete"}
			}),
			prefix + `spec.vaultPolicy: Forbidden: delete not allowed in namespace "shop": it may use read, list (the cluster admin sets this in the namespace's vault.exemple.com/allowed-capabilities annotation)`},
		{"Retain without the grant", context.Background(), nil,
			app(func(a *vaultv1beta1.VaultApp) { a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain }),
			prefix + `spec.deletionPolicy: Forbidden: Retain not allowed in namespace "shop": the cluster admin allows it with the namespace annotation vault.exemple.com/allow-retain=true`},
		{"Retain with the grant", context.Background(), map[string]string{tenancy.AllowRetainAnnotation: "true"},
			app(func(a *vaultv1beta1.VaultApp) { a.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain }), ""},
		{"a VaultServer that grants the namespace", context.Background(), nil,
			app(func(a *vaultv1beta1.VaultApp) { a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "shops"} }), ""},
		{"a VaultServer not created yet: the controller's to report", context.Background(), nil,
			app(func(a *vaultv1beta1.VaultApp) { a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "later"} }), ""},
		{"a VaultServer that grants the namespace nothing: answered as a missing one", context.Background(), nil,
			app(func(a *vaultv1beta1.VaultApp) { a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "teams"} }), ""},
		{"a schema bound", context.Background(), nil, app(func(a *vaultv1beta1.VaultApp) {
			for range 64 {
				a.Spec.Policy.Rules = append(a.Spec.Policy.Rules, a.Spec.Policy.Rules[0])
			}
		}), prefix + `spec.policy.rules: Too many: 65: must have at most 64 items`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validator(tt.annotations).ValidateCreate(tt.ctx, tt.app)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("message:\n%v\nwant:\n%s", err, tt.want)
			}
		})
	}
}

// A server that grants the namespace nothing and one that does not exist
// get the same warning, the name aside; one the VaultApp wrote to is judged
// on its grants (its team knew it).
func TestAnUnknownVaultServerIsAdmittedWithOneWarning(t *testing.T) {
	v := validator(nil)
	warned := map[string]string{}
	for _, server := range []string{"teams", "later"} {
		a := app(func(a *vaultv1beta1.VaultApp) { a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: server} })
		warnings, err := v.ValidateCreate(context.Background(), a)
		if err != nil || len(warnings) != 1 {
			t.Fatalf("%s: warnings %q, error %v", server, warnings, err)
		}
		warned[server] = strings.ReplaceAll(warnings[0], server, "NAME")
	}
	if warned["teams"] != warned["later"] || !strings.Contains(warned["teams"], `VaultServer "NAME" does not exist or grants namespace "shop" nothing`) {
		t.Fatalf("warnings differ or say too little:\n%s\n%s", warned["teams"], warned["later"])
	}

	old := app(func(a *vaultv1beta1.VaultApp) {
		a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "teams"}
		a.Status.Server = "teams"
	})
	changed := old.DeepCopy()
	changed.Spec.Policy.Rules[0].Path = "other/*"
	_, err := v.ValidateUpdate(context.Background(), old, changed)
	if want := `VaultServer "teams" grants namespace "shop" nothing`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a spec change on a server that took its grant back: %v, want %q", err, want)
	}
}

func TestVaultAppUpdates(t *testing.T) {
	v := validator(nil)
	old := app(nil)
	// A grant taken back never blocks an update that leaves the spec alone.
	wide := app(func(a *vaultv1beta1.VaultApp) {
		a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"delete"}
	})
	withLabel := wide.DeepCopy()
	withLabel.Labels = map[string]string{"team": "a"}
	if _, err := v.ValidateUpdate(context.Background(), wide, withLabel); err != nil {
		t.Fatalf("a metadata-only update was refused: %v", err)
	}
	// No spec change once deletion started.
	deleting := old.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	retain := deleting.DeepCopy()
	retain.Spec.DeletionPolicy = vaultv1beta1.DeletionPolicyRetain
	_, err := v.ValidateUpdate(context.Background(), deleting, retain)
	if want := `VaultApp.vault.exemple.com "api" is invalid: spec: Forbidden: may not change while the VaultApp is being deleted`; err == nil || err.Error() != want {
		t.Fatalf("message:\n%v\nwant:\n%s", err, want)
	}
}

func TestServerRefCannotChange(t *testing.T) {
	old := app(func(a *vaultv1beta1.VaultApp) { a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "shops"} })
	for _, now := range []*vaultv1beta1.VaultApp{
		app(func(a *vaultv1beta1.VaultApp) { a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "other"} }),
		app(nil),
	} {
		_, err := validator(nil).ValidateUpdate(context.Background(), old, now)
		if err == nil || !strings.Contains(err.Error(), "spec.serverRef: Forbidden: cannot change") {
			t.Errorf("serverRef %v -> %v: %v", old.Spec.ServerRef, now.Spec.ServerRef, err)
		}
	}
}

// A VaultApp that asks for no token TTL gets the default, or its
// VaultServer's cap for the namespace when that is lower: it is admitted.
func TestDefaultTokenTTLWithinTheServersCap(t *testing.T) {
	v := validator(nil)
	var shops vaultv1beta1.VaultServer
	if err := v.Client.Get(context.Background(), client.ObjectKey{Name: "shops"}, &shops); err != nil {
		t.Fatal(err)
	}
	shops.Spec.Access[0].MaxTokenTTL = &metav1.Duration{Duration: 20 * time.Minute}
	if err := v.Client.(client.Client).Update(context.Background(), &shops); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		server string
		want   time.Duration
	}{{"shops", 20 * time.Minute}, {"teams", time.Hour}, {"", time.Hour}} {
		a := app(func(a *vaultv1beta1.VaultApp) {
			if tt.server != "" {
				a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: tt.server}
			}
		})
		if err := (&VaultAppDefaulter{Client: v.Client}).Default(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if got := a.Spec.KubernetesAuth.TokenTTL.Duration; got != tt.want {
			t.Fatalf("server %q: default TTL %s, want %s", tt.server, got, tt.want)
		}
		if tt.server == "shops" {
			if _, err := v.ValidateCreate(context.Background(), a); err != nil {
				t.Fatalf("the defaulted VaultApp is refused: %v", err)
			}
		}
	}
}

func TestAnnotationsLeaveRoomForTheV1alpha1View(t *testing.T) {
	// serverRef has no v1alpha1 field: the v1alpha1 view saves the spec
	// (about 200 bytes) in the conversion-data annotation.
	withAnnotation := func(size int) *vaultv1beta1.VaultApp {
		return app(func(a *vaultv1beta1.VaultApp) {
			a.Spec.ServerRef = &vaultv1beta1.ServerReference{Name: "shops"}
			a.Annotations = map[string]string{"note": strings.Repeat("x", size)}
		})
	}
	v := validator(nil)
	const limit = 256 * 1024
	if _, err := v.ValidateCreate(context.Background(), withAnnotation(limit-len("note")-1000)); err != nil {
		t.Fatalf("an object with room for its v1alpha1 view refused: %v", err)
	}
	full := withAnnotation(limit - len("note"))
	_, err := v.ValidateCreate(context.Background(), full)
	want := `VaultApp.vault.exemple.com "api" is invalid: metadata.annotations: Forbidden: take 262144 bytes, which leaves too little room under the API server's limit of 262144 bytes for the vault.exemple.com/conversion-data annotation that the v1alpha1 view of this object needs to convert without loss`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	// Admitted before this check: it may still be edited without growing
	// (its finalizer removed), not grown.
	if _, err := v.ValidateUpdate(context.Background(), full, full.DeepCopy()); err != nil {
		t.Fatalf("an update that does not grow the annotations refused: %v", err)
	}
	smaller := withAnnotation(limit - len("note") - 10)
	if _, err := v.ValidateUpdate(context.Background(), smaller, full); err == nil {
		t.Fatal("an update that grows the annotations past the room was admitted")
	}
	// An object that fits only because its spec needs no conversion data
	// may not take a spec that does, even with annotations unchanged.
	noRef := full.DeepCopy()
	noRef.Spec.ServerRef = nil
	if _, err := v.ValidateUpdate(context.Background(), noRef, full); err == nil {
		t.Fatal("serverRef added to an object whose annotations leave no room for it was admitted")
	}
	// Saved data of an older view (stale here) is no part of the object:
	// it does not make a small object too large.
	stale := withAnnotation(10)
	stale.Annotations["vault.exemple.com/conversion-data"] = `{"vaultPolicy":"old"}`
	if _, err := v.ValidateCreate(context.Background(), stale); err != nil {
		t.Fatalf("an object carrying stale conversion data refused: %v", err)
	}
}

func TestARefreshRequestNeedsOnlyAValidID(t *testing.T) {
	v := validator(nil)
	old := app(nil)
	// Even where the grant was taken back since: a refresh asks for no right.
	wide := app(func(a *vaultv1beta1.VaultApp) {
		a.Spec.Policy.Rules[0].Capabilities = []vaultv1beta1.Capability{"delete"}
	})
	asked := wide.DeepCopy()
	asked.Annotations = map[string]string{vaultv1beta1.RefreshRequestAnnotation: "2026-12-02T12:00:00Z"}
	if _, err := v.ValidateUpdate(context.Background(), wide, asked); err != nil {
		t.Fatalf("a refresh request was refused: %v", err)
	}
	bad := old.DeepCopy()
	bad.Annotations = map[string]string{vaultv1beta1.RefreshRequestAnnotation: "now please"}
	_, err := v.ValidateUpdate(context.Background(), old, bad)
	if want := `VaultApp.vault.exemple.com "api" is invalid: metadata.annotations[vault.exemple.com/refresh-request]: Invalid value: "now please": a request id is`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("message:\n%v\nwant a prefix:\n%s", err, want)
	}
}
