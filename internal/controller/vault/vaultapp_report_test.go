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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

func TestARefreshRequestSaysWhatItFoundOnce(t *testing.T) {
	app := shopAPI()
	app.Generation = 2
	app.Annotations = map[string]string{vaultv1beta1.RefreshRequestAnnotation: "ticket-7"}
	whole := grant{tenancy.VaultGrant{Rules: app.Spec.Policy.Rules, TokenTTL: tenancy.TokenTTL(app)}}
	synced := &vaultv1beta1.VaultAppStatus{ObservedGeneration: 2}

	r := decideReport(app, synced, testPolicy, whole, nil, nothing)
	if r.eventType != corev1.EventTypeNormal || r.reason != vaultv1beta1.ReasonRefreshed || !strings.Contains(r.note, `on request "ticket-7"`) {
		t.Errorf("pending request, Vault in step: Event %s %s %q; want Normal Refreshed naming the request", r.eventType, r.reason, r.note)
	}
	if r := decideReport(app, synced, testPolicy, whole, nil, policyAndRole); r.reason != vaultv1beta1.ReasonDriftRepaired {
		t.Errorf("pending request, a hand edit repaired: reason %s, want DriftRepaired (the repair is the news)", r.reason)
	}
	app.Status.LastRefreshRequest = "ticket-7"
	if r := decideReport(app, synced, testPolicy, whole, nil, nothing); r.note != "" {
		t.Errorf("request already honoured: Event %s %q, want none", r.reason, r.note)
	}
}

func TestDecideReport(t *testing.T) {
	app := shopAPI()
	app.Generation = 2
	whole := grant{tenancy.VaultGrant{Rules: app.Spec.Policy.Rules, TokenTTL: tenancy.TokenTTL(app)}}
	narrowed := grant{tenancy.VaultGrant{Rules: []vaultv1beta1.PolicyRule{{Path: "db/*", Capabilities: []vaultv1beta1.Capability{"read"}}}, TokenTTL: tenancy.TokenTTL(app)}}
	refused := field.ErrorList{field.Forbidden(field.NewPath("spec", "policy", "rules").Index(0).Child("capabilities"), "list not granted")}
	synced := &vaultv1beta1.VaultAppStatus{ObservedGeneration: 2}
	tests := []struct {
		name                   string
		granted                grant
		refused                field.ErrorList
		before                 *vaultv1beta1.VaultAppStatus
		changed                written
		ready, policy          bool
		readyReason, eventType string
		reason, note           string
	}{
		{"in step, nothing written: no Event", whole, nil, synced, nothing, true, true, vaultv1beta1.ReasonSynced, corev1.EventTypeNormal, vaultv1beta1.ReasonSynced, ""},
		{"first write", whole, nil, &vaultv1beta1.VaultAppStatus{}, policyAndRole, true, true, vaultv1beta1.ReasonSynced, corev1.EventTypeNormal, vaultv1beta1.ReasonCreated, "app.shop.api in Vault"},
		{"a new spec written", whole, nil, &vaultv1beta1.VaultAppStatus{ObservedGeneration: 1}, policyAndRole, true, true, vaultv1beta1.ReasonSynced, corev1.EventTypeNormal, vaultv1beta1.ReasonUpdated, "app.shop.api in Vault"},
		{"a hand edit repaired", whole, nil, synced, policyAndRole, true, true, vaultv1beta1.ReasonSynced, corev1.EventTypeNormal, vaultv1beta1.ReasonDriftRepaired, "app.shop.api in Vault"},
		{"narrowed to the grant", narrowed, refused, synced, nothing, false, true, vaultv1beta1.ReasonNotAllowed, corev1.EventTypeWarning, vaultv1beta1.ReasonGrantNarrowed, "Vault holds only what is granted"},
		{"nothing granted, nothing was live", grant{}, refused, &vaultv1beta1.VaultAppStatus{}, nothing, false, false, vaultv1beta1.ReasonNotAllowed, corev1.EventTypeWarning, vaultv1beta1.ReasonNotAllowed, "nothing the spec asks is granted"},
		{"nothing granted any more: removed", grant{}, refused, synced, policyAndRole, false, false, vaultv1beta1.ReasonNotAllowed, corev1.EventTypeWarning, vaultv1beta1.ReasonGrantRevoked, "removed policy and role app.shop.api from Vault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := decideReport(app, tt.before, testPolicy, tt.granted, tt.refused, tt.changed)
			var app vaultv1beta1.VaultApp
			r.apply(&app)
			ready := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeReady)
			if (ready.Status == metav1.ConditionTrue) != tt.ready || r.policy.ok != tt.policy || ready.Reason != tt.readyReason {
				t.Errorf("Ready %s %s, PolicySynced %v; want Ready %v %s, PolicySynced %v", ready.Status, ready.Reason, r.policy.ok, tt.ready, tt.readyReason, tt.policy)
			}
			if access := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeAccessGranted); (access.Status == metav1.ConditionTrue) != (len(tt.refused) == 0) {
				t.Errorf("AccessGranted %s, with %d refused", access.Status, len(tt.refused))
			}
			if r.eventType != tt.eventType || r.reason != tt.reason || !strings.Contains(r.note, tt.note) || (tt.note == "") != (r.note == "") {
				t.Errorf("Event %s %s %q; want %s %s containing %q", r.eventType, r.reason, r.note, tt.eventType, tt.reason, tt.note)
			}
		})
	}
}

func TestAFailedPassLeavesTheGrantUnknownAndReadyNamesTheFailure(t *testing.T) {
	var app vaultv1beta1.VaultApp
	spec := shopAPI()
	whole := grant{tenancy.VaultGrant{Rules: spec.Spec.Policy.Rules, TokenTTL: tenancy.TokenTTL(spec)}}
	decideReport(spec, &vaultv1beta1.VaultAppStatus{}, testPolicy, whole, nil, nothing).apply(&app)
	if access := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeAccessGranted); access.Status != metav1.ConditionTrue {
		t.Fatalf("AccessGranted = %s after an in-step pass", access.Status)
	}
	failed(vaultv1beta1.ReasonVaultUnavailable, "Vault does not answer").apply(&app)
	access := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeAccessGranted)
	if access.Status != metav1.ConditionUnknown || access.Reason != vaultv1beta1.ReasonVaultUnavailable {
		t.Errorf("AccessGranted = %s %s, want Unknown %s", access.Status, access.Reason, vaultv1beta1.ReasonVaultUnavailable)
	}
	if ready := meta.FindStatusCondition(app.Status.Conditions, vaultv1beta1.TypeReady); ready.Status != metav1.ConditionFalse || ready.Reason != vaultv1beta1.ReasonVaultUnavailable {
		t.Errorf("Ready = %s %s, want False %s", ready.Status, ready.Reason, vaultv1beta1.ReasonVaultUnavailable)
	}
}
