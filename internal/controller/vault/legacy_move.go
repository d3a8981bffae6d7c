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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// holdOnEnv says why a VaultApp written to the environment's Vault does
// not move yet to twin, the VaultServer of the same Location; "" when it
// may. It moves only when twin grants all it asks: its grant then covers
// what the namespace's annotations granted, so the move writes nothing
// and removes nothing. Otherwise it stays where it is, Ready, and the
// admin reads why in its LegacyConfiguration condition.
func (v *ClusterDestinations) holdOnEnv(ctx context.Context, app *vaultv1beta1.VaultApp, twin *vaultv1beta1.VaultServer) (string, error) {
	var ns corev1.Namespace
	if err := v.Reader.Get(ctx, client.ObjectKey{Name: app.Namespace}, &ns); err != nil {
		return "", fmt.Errorf("read namespace %q: %w", app.Namespace, err)
	}
	return moveRefused(app, &ns, twin), nil
}

// moveRefused is holdOnEnv's decision, on the VaultApp as the webhook
// would default it on twin.
func moveRefused(app *vaultv1beta1.VaultApp, ns *corev1.Namespace, twin *vaultv1beta1.VaultServer) string {
	if !tenancy.VaultServerGrantsNamespace(twin, app.Namespace) {
		// Not named: the app team learns of no server it may not use.
		return "a VaultServer writes where the environment's Vault does, but does not grant this namespace: " +
			"the VaultApp moves to it once the cluster admin lists the namespace in its spec.access"
	}
	defaulted := app.DeepCopy()
	defaulted.SetDefaults(tenancy.DefaultTokenTTLOn(twin, app.Namespace))
	if _, refused := tenancy.DecideVaultGrant(defaulted, ns, twin); len(refused) > 0 {
		return fmt.Sprintf("VaultServer %s writes where the environment's Vault does, but does not grant all this VaultApp asks (%s): "+
			"the VaultApp moves to it once the cluster admin grants it there", twin.Name, refused.ToAggregate().Error())
	}
	return ""
}
