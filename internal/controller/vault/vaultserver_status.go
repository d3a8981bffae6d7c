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
	"k8s.io/apimachinery/pkg/api/equality"

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
}

// decideServerStatus is the status a check reports (pure): Connected, and
// Ready as its summary; the product and version (kept through an outage,
// not through a change of server); the cluster's name; the issuer JWT app
// roles bind; the count of VaultApps. An Event when the conditions
// changed.
func decideServerStatus(server *vaultv1beta1.VaultServer, seen serverCheckOutcome) (vaultv1beta1.VaultServerStatus, *serverEvent) {
	clusterUID, info, checkErr, apps := seen.clusterUID, seen.info, seen.err, seen.apps
	before := server.Status
	st := *server.Status.DeepCopy()
	connected := serverConnection(server.Spec.Address, info, checkErr)
	conditions.Set(&st.Conditions, server.Generation, vaultv1beta1.TypeConnected, checkErr == nil, connected.reason, connected.message)
	conditions.SetSummary(&st.Conditions, server.Generation, vaultv1beta1.TypeReady, vaultv1beta1.TypeConnected)
	if info.Version != "" || server.Generation != before.ObservedGeneration {
		st.Product, st.Version = info.Product, info.Version
	}
	st.Cluster = server.Spec.Cluster
	if st.Cluster == "" {
		st.Cluster = clusterUID
	}
	st.VaultApps = apps
	if checkErr == nil || server.Spec.AppAuth.JWT == nil {
		st.AppAuthIssuer = seen.issuer
	}
	st.ObservedGeneration = server.Generation
	if equality.Semantic.DeepEqual(before.Conditions, st.Conditions) {
		return st, nil
	}
	eventType := corev1.EventTypeNormal
	if checkErr != nil {
		eventType = corev1.EventTypeWarning
	}
	return st, &serverEvent{eventType: eventType, reason: connected.reason, message: connected.message}
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
