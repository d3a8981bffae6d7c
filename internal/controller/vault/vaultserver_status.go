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
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/controller/conditions"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// connection is a Connected condition's reason and message.
type connection struct{ reason, message string }

// serverEvent is the Event a check's outcome is worth.
type serverEvent struct{ eventType, reason, message string }

// serverCheckOutcome is what a check of a server observed.
type serverCheckOutcome struct {
	clusterUID string
	info       vaultclient.ServerInfo
	err        error
	apps       int32
	// issuer the JWT app roles bind; empty for Kubernetes-auth roles.
	issuer string
	// registration is this cluster's in the Vault; nil when the check
	// did not get that far (the conditions stay as they were).
	registration *registrationOutcome
}

// decideServerStatus is the status a check reports (pure): Connected and
// Registered, Ready as their summary, Isolated beside them; the product
// and version (kept through an outage, not through a change of server);
// the cluster's name; the issuer JWT app roles bind; the count of
// VaultApps. An Event for each condition that changed.
func decideServerStatus(server *vaultv1beta1.VaultServer, seen serverCheckOutcome) (vaultv1beta1.VaultServerStatus, []serverEvent) {
	before := server.Status
	st := *server.Status.DeepCopy()
	connected := serverConnection(server.Spec.Address, seen.info, seen.err)
	conditions.Set(&st.Conditions, server.Generation, vaultv1beta1.TypeConnected, seen.err == nil, connected.reason, connected.message)
	if reg := seen.registration; reg != nil {
		registered := reg.registered.message
		if reg.contested != nil {
			st.ContestedPolicies = *reg.contested
		}
		if n := len(st.ContestedPolicies); n > 0 && reg.registered.ok {
			registered += fmt.Sprintf("; VaultApps of another cluster ask for %d of this cluster's policies too (status.contestedPolicies): their roles' tokens live at most %s", n, vaultv1beta1.ContestedTokenTTL)
		}
		conditions.Set(&st.Conditions, server.Generation, vaultv1beta1.TypeRegistered, reg.registered.ok, reg.registered.reason, registered)
		if reg.kv != nil {
			conditions.Set(&st.Conditions, server.Generation, vaultv1beta1.TypeIsolated, reg.kv.ok, reg.kv.reason, reg.kv.message)
		}
	}
	conditions.SetSummaryWith(&st.Conditions, server.Generation, vaultv1beta1.TypeReady, connected.reason, connected.message,
		vaultv1beta1.TypeConnected, vaultv1beta1.TypeRegistered)
	if seen.info.Version != "" || server.Generation != before.ObservedGeneration {
		st.Product, st.Version = seen.info.Product, seen.info.Version
	}
	st.Cluster = server.Spec.Cluster
	if st.Cluster == "" {
		st.Cluster = seen.clusterUID
	}
	st.VaultApps = seen.apps
	if seen.err == nil || server.Spec.AppAuth.JWT == nil {
		st.AppAuthIssuer = seen.issuer
	}
	st.ObservedGeneration = server.Generation
	return st, serverEvents(before.Conditions, st.Conditions, connected, seen.err, seen.registration)
}

// serverEvents is an Event for each of Connected, Registered and
// Isolated that changed: Warning when it is not True. Registered and
// Isolated are worth one only when not True, or True again: a new server
// gets one Event, Connected.
func serverEvents(before, after []metav1.Condition, connected connection, checkErr error, reg *registrationOutcome) []serverEvent {
	var events []serverEvent
	if changed(before, after, vaultv1beta1.TypeConnected, false) {
		events = append(events, serverEvent{eventType: eventTypeOf(checkErr == nil), reason: connected.reason, message: connected.message})
	}
	if reg == nil {
		return events
	}
	if changed(before, after, vaultv1beta1.TypeRegistered, true) {
		events = append(events, serverEvent{eventType: eventTypeOf(reg.registered.ok), reason: reg.registered.reason, message: reg.registered.message})
	}
	if reg.kv != nil && changed(before, after, vaultv1beta1.TypeIsolated, true) {
		events = append(events, serverEvent{eventType: eventTypeOf(reg.kv.ok), reason: reg.kv.reason, message: reg.kv.message})
	}
	return events
}

// changed reports whether a condition changed from before to after;
// quietTrue leaves out one that is, and was, True or absent.
func changed(before, after []metav1.Condition, typ string, quietTrue bool) bool {
	was, now := meta.FindStatusCondition(before, typ), meta.FindStatusCondition(after, typ)
	switch {
	case now == nil, was != nil && was.Status == now.Status && was.Reason == now.Reason && was.Message == now.Message:
		return false
	case quietTrue && now.Status == metav1.ConditionTrue && (was == nil || was.Status == metav1.ConditionTrue):
		return false
	}
	return true
}

func eventTypeOf(ok bool) string {
	if ok {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// serverConnection decides the Connected condition from a check: Vault
// that does not answer, a CA the operator cannot read, a login or request
// Vault refused, or connected.
func serverConnection(address string, info vaultclient.ServerInfo, err error) connection {
	var ca *errCA
	switch {
	case err == nil:
		product := info.Product
		if product == "" {
			product = vaultclient.ProductVault
		}
		return connection{vaultv1beta1.ReasonConnected, fmt.Sprintf("logged in to %s %s at %s", product, info.Version, address)}
	case errors.As(err, &ca):
		return connection{vaultv1beta1.ReasonCAInvalid, err.Error()}
	case vaultclient.Unavailable(err):
		return connection{vaultv1beta1.ReasonVaultUnavailable, "Vault does not answer; checked again with backoff: " + err.Error()}
	}
	return connection{vaultv1beta1.ReasonVaultError, err.Error()}
}
