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

// The phase of a pass that reads the client secret: from Keycloak, or as
// read from it before while its refresh is not due (recentSecrets).

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/keycloak"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// sourced is what read had: the Secret data, how long a remembered secret
// still serves (zero when just read), and the refresh request it read
// Keycloak for.
type sourced struct {
	data      map[string][]byte
	serves    time.Duration
	refreshed string
}

// read has the data of the target Secrets: from the secret read in the
// last refresh while it serves (a repair costs Keycloak nothing), else,
// and after a regeneration (fresh) or on a refresh request, read from
// Keycloak now.
func (r *KeycloakClientCredentialReconciler) read(ctx context.Context, sc *scope, fresh bool) (sourced, *sourceError) {
	kcc, src := sc.kcc, sc.src
	if sc.kc == nil { // rotate says so first; a pass without it reads nothing
		return sourced{}, classify(sc.kcErr, sc.server.Name)
	}
	key := client.ObjectKeyFromObject(kcc)
	out := sourced{refreshed: kcc.PendingRefresh()}
	read := recentSource{uid: kcc.UID, generation: kcc.Generation, serverUID: sc.server.UID, serverGeneration: sc.server.Generation, realm: src.Realm, clientID: src.ClientID}
	cred, serves, remembered := r.recent.get(key, read, r.now())
	if !remembered || fresh || out.refreshed != "" {
		serves = 0
		var err error
		if cred, err = readCredential(ctx, kcc, sc.kc); err != nil {
			r.recent.forget(key)
			return out, r.unavailable(sc, err)
		}
		r.recent.put(key, read, cred, r.now().Add(tenancy.CredentialRefreshInterval(kcc)))
	}
	out.data, out.serves = desiredData(kcc, cred, sc.kc.IssuerURL(src.Realm), sc.kc.TokenURL(src.Realm)), serves
	return out, nil
}

// readCredential reads the client secret, and the previous one while it is
// valid and the spec maps a key for it.
func readCredential(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential, kc KeycloakAPI) (keycloak.Credential, error) {
	src := kcc.Spec.Source
	cred, err := kc.ClientSecret(ctx, src.Realm, src.ClientID)
	if err != nil || !previousValid(kcc) || kcc.Spec.Target.Keys.PreviousClientSecret == "" {
		return cred, err
	}
	// The previous secret is a convenience: failing to read it leaves it out
	// of the Secrets (a Keycloak that does not answer fails the pass).
	previous, err := kc.PreviousSecret(ctx, src.Realm, src.ClientID)
	if err != nil && keycloak.Unavailable(err) {
		return cred, err
	}
	cred.Previous = previous
	return cred, nil
}
