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

package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Nerzal/gocloak/v13"
	vaultapi "github.com/hashicorp/vault/api"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the Vault and Keycloak administrators do once, before the operator
// can work: the tests and the demo do it the same way, and the README tells
// a cluster admin to do the same.

// AdminClient returns a Vault client with the dev server's root token.
func (v *Vault) AdminClient() (*vaultapi.Client, error) {
	cfg := vaultapi.DefaultConfig()
	cfg.Address = v.Addr
	if v.CACert != "" {
		if err := cfg.ConfigureTLS(&vaultapi.TLSConfig{CACert: v.CACert}); err != nil {
			return nil, err
		}
	}
	c, err := vaultapi.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	c.SetToken(v.Token)
	if v.namespace != "" {
		c.SetNamespace(v.namespace)
	}
	KeepSecret(v.Token)
	return c, nil
}

// ConfigureKubernetesAuth enables Vault's Kubernetes auth method at
// "kubernetes" and points it at the API server of cfg: see
// ConfigureKubernetesAuthAt.
func (v *Vault) ConfigureKubernetesAuth(ctx context.Context, c client.Client, cfg *rest.Config) error {
	return v.ConfigureKubernetesAuthAt(ctx, "kubernetes", c, cfg)
}

// ConfigureKubernetesAuthAt enables a Kubernetes auth method at mount and
// points it at the API server of cfg, with a reviewer ServiceAccount
// (vault-system/vault-reviewer) allowed to call TokenReview: one mount per
// cluster, when several share the Vault. Running it again is harmless.
func (v *Vault) ConfigureKubernetesAuthAt(ctx context.Context, mount string, c client.Client, cfg *rest.Config) error {
	admin, err := v.AdminClient()
	if err != nil {
		return err
	}
	auths, err := admin.Sys().ListAuthWithContext(ctx)
	if err != nil {
		return fmt.Errorf("list Vault auth methods: %w", err)
	}
	if _, ok := auths[mount+"/"]; !ok {
		if err := admin.Sys().EnableAuthWithOptionsWithContext(ctx, mount, &vaultapi.EnableAuthOptions{Type: "kubernetes"}); err != nil {
			return fmt.Errorf("enable kubernetes auth at %s: %w", mount, err)
		}
	}
	const ns, sa = "vault-system", "vault-reviewer"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "vault-reviewer-auth-delegator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
		},
	} {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	reviewer, err := ServiceAccountToken(ctx, cfg, ns, sa)
	if err != nil {
		return err
	}
	_, err = admin.Logical().WriteWithContext(ctx, "auth/"+mount+"/config", map[string]any{
		"kubernetes_host":      cfg.Host,
		"kubernetes_ca_cert":   string(cfg.CAData),
		"token_reviewer_jwt":   reviewer,
		"disable_local_ca_jwt": true,
	})
	if err != nil {
		return fmt.Errorf("configure kubernetes auth at %s: %w", mount, err)
	}
	return nil
}

// OperatorVaultPolicy is what the README tells a Vault admin to grant the
// operator (keep the two equal): policies named app.* only, and the list of
// policy and role names (the orphan sweep; the check that a new VaultApp's
// names are free); roles named app.* only, with only the parameters the
// operator writes, and token_policies confined to app.* names (a comma is
// denied: one string "app.a,ops-admin" would match the glob and hand out
// an admin's policy). The operator's token still writes any text into an
// app.* policy: the confinement keeps it to its names, not its rights.
const OperatorVaultPolicy = `
path "sys/policies/acl" { capabilities = ["list"] }
path "sys/policies/acl/app.*" { capabilities = ["create", "read", "update", "delete"] }
path "sys/policies/acl/vko-cluster.*" { capabilities = ["create", "read", "update", "delete"] }
path "auth/token/lookup-self" { capabilities = ["read"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/kubernetes/role" { capabilities = ["list"] }
path "auth/kubernetes/role/app.*" {
  capabilities = ["create", "read", "update", "delete"]
  allowed_parameters = {
    "bound_service_account_names"      = []
    "bound_service_account_namespaces" = []
    "audience"                         = []
    "token_policies"                   = ["app.*"]
    "token_ttl"                        = []
    "token_max_ttl"                    = []
  }
  # One policy per role: "app.a,ops-admin" in one string would pass the glob.
  denied_parameters = {
    "token_policies" = ["*,*"]
  }
}
`

// OperatorVaultPolicyFor is OperatorVaultPolicy for one of several clusters
// sharing a Vault, as the README shows it: the cluster's own auth mount, and
// only names of its own prefix (app-<prefix>.*), so that no cluster's
// operator can write, read or delete another's policies and roles.
func OperatorVaultPolicyFor(mount, namePrefix string) string {
	return strings.NewReplacer("auth/kubernetes/", "auth/"+mount+"/", "app.*", "app-"+namePrefix+".*").Replace(OperatorVaultPolicy)
}

// AllowOperator does the rest of the README's Vault part: the operator's
// policy, and the Kubernetes-auth role vault-keycloak-operator bound to
// the operator's ServiceAccount.
func (v *Vault) AllowOperator(ctx context.Context, namespace, serviceAccount string) error {
	return v.AllowOperatorAt(ctx, "kubernetes", "vault-keycloak-operator", OperatorVaultPolicy, namespace, serviceAccount)
}

// AllowOperatorAt writes the operator's policy under policyName with text,
// and its role vault-keycloak-operator at the Kubernetes auth mount, bound
// to the operator's ServiceAccount.
func (v *Vault) AllowOperatorAt(ctx context.Context, mount, policyName, text, namespace, serviceAccount string) error {
	return v.allowOperator(ctx, mount, policyName, text, map[string]any{
		"bound_service_account_names":      []string{serviceAccount},
		"bound_service_account_namespaces": []string{namespace},
		"token_policies":                   []string{policyName},
		"token_no_default_policy":          true,
		"token_ttl":                        3600,
	})
}

// allowOperator writes the operator's policy under policyName, and its role
// vault-keycloak-operator at mount with role's bindings.
func (v *Vault) allowOperator(ctx context.Context, mount, policyName, text string, role map[string]any) error {
	admin, err := v.AdminClient()
	if err != nil {
		return err
	}
	if err := admin.Sys().PutPolicyWithContext(ctx, policyName, text); err != nil {
		return fmt.Errorf("write the operator's policy %s: %w", policyName, err)
	}
	if _, err := admin.Logical().WriteWithContext(ctx, "auth/"+mount+"/role/vault-keycloak-operator", role); err != nil {
		return fmt.Errorf("write the operator's role at %s: %w", mount, err)
	}
	return nil
}

// ServiceAccountToken asks the API server for a token of the ServiceAccount,
// as the kubelet does for a pod (the API server's own audience).
func ServiceAccountToken(ctx context.Context, cfg *rest.Config, namespace, name string) (string, error) {
	return ServiceAccountTokenFor(ctx, cfg, namespace, name, "")
}

// KeycloakAdmin is a session of Keycloak's bootstrap admin.
type KeycloakAdmin struct {
	GC    *gocloak.GoCloak
	Token string
	// URL is the server's base URL, for the calls gocloak does not offer.
	URL string
}

// Admin logs in as the bootstrap admin of the master realm.
func (k *Keycloak) Admin(ctx context.Context) (*KeycloakAdmin, error) {
	gc := gocloak.NewClient(k.URL)
	token, err := gc.LoginAdmin(ctx, k.User, k.Password, "master")
	if err != nil {
		return nil, fmt.Errorf("log in to Keycloak as admin: %w", err)
	}
	KeepSecret(k.Password, token.AccessToken)
	return &KeycloakAdmin{GC: gc, Token: token.AccessToken, URL: k.URL}, nil
}

// CreateRealm creates an enabled realm; one that exists already is kept
// (the demo and the tests may share a Keycloak).
func (a *KeycloakAdmin) CreateRealm(ctx context.Context, name string) error {
	// Admin events on, as the admin setup recommends (a secret
	// regenerated elsewhere reaches the readers at once); their details
	// off, so that Keycloak's event store keeps no secret.
	if _, err := a.GC.CreateRealm(ctx, a.Token, gocloak.RealmRepresentation{Realm: &name, Enabled: gocloak.BoolP(true),
		AdminEventsEnabled: gocloak.BoolP(true), AdminEventsDetailsEnabled: gocloak.BoolP(false)}); err != nil && !exists(err) {
		return fmt.Errorf("create realm %s: %w", name, err)
	}
	return nil
}

// CreateClient creates a confidential client with a service account (so it
// can request tokens with client credentials); secret, when not empty, is
// set as its secret. A client that exists already is kept.
func (a *KeycloakAdmin) CreateClient(ctx context.Context, realm, clientID, secret string) error {
	c := gocloak.Client{
		ClientID:               &clientID,
		Enabled:                gocloak.BoolP(true),
		PublicClient:           gocloak.BoolP(false),
		ServiceAccountsEnabled: gocloak.BoolP(true),
		StandardFlowEnabled:    gocloak.BoolP(false),
	}
	if secret != "" {
		c.Secret = &secret
		if strings.Trim(secret, "*") != "" { // not Keycloak's mask, which tests set on purpose
			KeepSecret(secret)
		}
	}
	if _, err := a.GC.CreateClient(ctx, a.Token, realm, c); err != nil && !exists(err) {
		return fmt.Errorf("create client %s in realm %s: %w", clientID, realm, err)
	}
	return nil
}

// clientUUID is the internal id of the client with that clientId.
func (a *KeycloakAdmin) clientUUID(ctx context.Context, realm, clientID string) (string, error) {
	clients, err := a.GC.GetClients(ctx, a.Token, realm, gocloak.GetClientsParams{ClientID: &clientID})
	if err != nil {
		return "", err
	}
	for _, c := range clients {
		if gocloak.PString(c.ClientID) == clientID {
			return gocloak.PString(c.ID), nil
		}
	}
	return "", fmt.Errorf("client %s not found in realm %s", clientID, realm)
}

// ClientSecret reads a client's secret.
func (a *KeycloakAdmin) ClientSecret(ctx context.Context, realm, clientID string) (string, error) {
	id, err := a.clientUUID(ctx, realm, clientID)
	if err != nil {
		return "", err
	}
	cred, err := a.GC.GetClientSecret(ctx, a.Token, realm, id)
	if err != nil {
		return "", err
	}
	KeepSecret(gocloak.PString(cred.Value))
	return gocloak.PString(cred.Value), nil
}

// RegenerateSecret makes Keycloak issue a new secret for the client.
func (a *KeycloakAdmin) RegenerateSecret(ctx context.Context, realm, clientID string) error {
	id, err := a.clientUUID(ctx, realm, clientID)
	if err != nil {
		return err
	}
	_, err = a.GC.RegenerateClientSecret(ctx, a.Token, realm, id)
	return err
}

// AgeSecret makes Keycloak's record of the client's current secret say it
// was issued age ago, as for a client in use for a while: the operator
// rotates a client at most once per RotationRequestGap from that record, and
// a client just created with a generated secret would make a test wait.
func (a *KeycloakAdmin) AgeSecret(ctx context.Context, realm, clientID string, age time.Duration) error {
	id, err := a.clientUUID(ctx, realm, clientID)
	if err != nil {
		return err
	}
	c, err := a.GC.GetClient(ctx, a.Token, realm, id)
	if err != nil {
		return fmt.Errorf("read client %s in realm %s: %w", clientID, realm, err)
	}
	attrs := map[string]string{}
	if c.Attributes != nil {
		attrs = *c.Attributes
	}
	attrs["client.secret.creation.time"] = strconv.FormatInt(time.Now().Add(-age).Unix(), 10)
	c.Attributes = &attrs
	c.Secret = nil // the update keeps the secret it holds
	if err := a.GC.UpdateClient(ctx, a.Token, realm, *c); err != nil {
		return fmt.Errorf("age the secret of client %s in realm %s: %w", clientID, realm, err)
	}
	return nil
}

// OperatorKeycloakRoles are the rights the admin setup gives the
// operator's Keycloak client in each realm it may read (client roles of the
// realm's "<realm>-realm" client in master): view-clients finds clients and
// reads their secrets; manage-clients regenerates a secret and ends the
// previous one's grace; view-realm reads the realm's client policies (the
// grace a rotation can have); view-events reads the realm's admin events (a
// secret regenerated elsewhere). The quick start, which grants no rotation,
// gives view-clients alone.
var OperatorKeycloakRoles = []string{"view-clients", "manage-clients", "view-realm", "view-events"}

// CreateOperatorClient creates a client in the master realm whose service
// account holds OperatorKeycloakRoles in each of realms and nothing else —
// the credentials docs/admin-setup.md has a cluster admin give the operator
// for authType ClientCredentials — and returns its secret. Each realm must
// exist.
func (a *KeycloakAdmin) CreateOperatorClient(ctx context.Context, clientID string, realms ...string) (string, error) {
	if len(realms) == 0 {
		return "", fmt.Errorf("the operator's client %s: no realm to grant", clientID)
	}
	if err := a.CreateClient(ctx, "master", clientID, ""); err != nil {
		return "", err
	}
	id, err := a.clientUUID(ctx, "master", clientID)
	if err != nil {
		return "", err
	}
	user, err := a.GC.GetClientServiceAccount(ctx, a.Token, "master", id)
	if err != nil {
		return "", err
	}
	for _, realm := range realms {
		adminClient, err := a.clientUUID(ctx, "master", realm+"-realm")
		if err != nil {
			return "", fmt.Errorf("the admin client of realm %s: %w", realm, err)
		}
		var roles []gocloak.Role
		for _, name := range OperatorKeycloakRoles {
			role, err := a.GC.GetClientRole(ctx, a.Token, "master", adminClient, name)
			if err != nil {
				return "", fmt.Errorf("role %s of realm %s: %w", name, realm, err)
			}
			roles = append(roles, *role)
		}
		if err := a.GC.AddClientRolesToUser(ctx, a.Token, "master", adminClient, gocloak.PString(user.ID), roles); err != nil {
			return "", fmt.Errorf("grant the operator's client %s in realm %s: %w", clientID, realm, err)
		}
	}
	return a.ClientSecret(ctx, "master", clientID)
}

// exists reports Keycloak's 409 Conflict: the thing is there already.
func exists(err error) bool {
	var apiErr *gocloak.APIError
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict
}

// RotateWithGrace makes realm keep a confidential client's previous secret
// valid for rotatedLifetime after a regeneration, as the README asks an
// admin to: a client profile with the secret-rotation executor, and a
// policy applying it to every confidential client. The realm's existing
// profiles and policies are replaced (test realms have none).
func (a *KeycloakAdmin) RotateWithGrace(ctx context.Context, realm string, rotatedLifetime time.Duration) error {
	secs := strconv.Itoa(int(rotatedLifetime.Seconds()))
	base := strings.TrimRight(a.URL, "/") + "/admin/realms/" + realm + "/client-policies"
	for _, put := range []struct{ path, body string }{
		{"/profiles", `{"profiles":[{"name":"vko-rotation","executors":[{"executor":"secret-rotation","configuration":{"expiration-period":"31536000","rotated-expiration-period":"` + secs + `","remaining-rotation-period":"86400"}}]}]}`},
		{"/policies", `{"policies":[{"name":"vko-rotation","enabled":true,"conditions":[{"condition":"client-access-type","configuration":{"type":["confidential"]}}],"profiles":["vko-rotation"]}]}`},
	} {
		resp, err := a.GC.RestyClient().R().SetContext(ctx).SetAuthToken(a.Token).
			SetHeader("Content-Type", "application/json").SetBody(put.body).Put(base + put.path)
		if err != nil {
			return fmt.Errorf("put client %s of realm %q: %w", put.path, realm, err)
		}
		if resp.IsError() {
			return fmt.Errorf("put client %s of realm %q: %s", put.path, realm, resp.Status())
		}
	}
	return nil
}

// DeleteRealm deletes a realm, if it exists: doc tests that share the
// run's Keycloak each start from the names their doc creates.
func (a *KeycloakAdmin) DeleteRealm(ctx context.Context, name string) error {
	if err := a.GC.DeleteRealm(ctx, a.Token, name); err != nil && !notFound(err) {
		return fmt.Errorf("delete realm %s: %w", name, err)
	}
	return nil
}

// DeleteClient deletes the client with that clientId, if there is one.
func (a *KeycloakAdmin) DeleteClient(ctx context.Context, realm, clientID string) error {
	clients, err := a.GC.GetClients(ctx, a.Token, realm, gocloak.GetClientsParams{ClientID: &clientID})
	if err != nil {
		return fmt.Errorf("find client %s in realm %s: %w", clientID, realm, err)
	}
	for _, c := range clients {
		if err := a.GC.DeleteClient(ctx, a.Token, realm, gocloak.PString(c.ID)); err != nil && !notFound(err) {
			return fmt.Errorf("delete client %s in realm %s: %w", clientID, realm, err)
		}
	}
	return nil
}

// notFound reports Keycloak's 404.
func notFound(err error) bool {
	var apiErr *gocloak.APIError
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusNotFound
}
