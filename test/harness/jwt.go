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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// OperatorVaultJWTPolicy is what the README tells a Vault admin to grant
// the operator when a VaultServer writes app roles to a JWT auth mount
// (keep the two equal): as OperatorVaultPolicy, with the parameters of a
// JWT role, each fixed to what the operator writes but the bindings.
const OperatorVaultJWTPolicy = `
path "sys/policies/acl" { capabilities = ["list"] }
path "sys/policies/acl/app.*" { capabilities = ["create", "read", "update", "delete"] }
path "sys/policies/acl/vko-cluster.*" { capabilities = ["create", "read", "update", "delete"] }
path "auth/token/lookup-self" { capabilities = ["read"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/jwt/role" { capabilities = ["list"] }
path "auth/jwt/role/app.*" {
  capabilities = ["create", "read", "update", "delete"]
  allowed_parameters = {
    "role_type"         = ["jwt"]
    "user_claim"        = ["sub"]
    "bound_audiences"   = []
    "bound_claims"      = []
    "bound_claims_type" = ["string"]
    "token_policies"    = ["app.*"]
    "token_ttl"         = []
    "token_max_ttl"     = []
  }
  # One policy per role: "app.a,ops-admin" in one string would pass the glob.
  denied_parameters = {
    "token_policies" = ["*,*"]
  }
}
`

// OperatorVaultJWTPolicyFor is OperatorVaultJWTPolicy at a JWT mount, for
// names of one prefix.
func OperatorVaultJWTPolicyFor(mount, namePrefix string) string {
	return strings.NewReplacer("auth/jwt/", "auth/"+mount+"/", "app.*", "app-"+namePrefix+".*").Replace(OperatorVaultJWTPolicy)
}

// ConfigureJWTAuthAt enables a JWT auth mount that trusts the tokens of the
// clusters at cfgs: it checks their signatures with the public keys each API
// server publishes (/openid/v1/jwks), as a Vault that cannot reach the API
// servers is configured, and never calls the clusters.
func (v *Vault) ConfigureJWTAuthAt(ctx context.Context, mount string, cfgs ...*rest.Config) error {
	admin, err := v.AdminClient()
	if err != nil {
		return err
	}
	if err := admin.Sys().EnableAuthWithOptionsWithContext(ctx, mount, &vaultapi.EnableAuthOptions{Type: authJWT}); err != nil &&
		!strings.Contains(err.Error(), "path is already in use") {
		return fmt.Errorf("enable jwt auth at %s: %w", mount, err)
	}
	var keys []string
	for _, cfg := range cfgs {
		more, err := ClusterPublicKeys(ctx, cfg)
		if err != nil {
			return err
		}
		keys = append(keys, more...)
	}
	if _, err := admin.Logical().WriteWithContext(ctx, "auth/"+mount+"/config", map[string]any{"jwt_validation_pubkeys": keys}); err != nil {
		return fmt.Errorf("configure jwt auth at %s: %w", mount, err)
	}
	return nil
}

// AllowOperatorJWTAt writes the operator's policy, and its JWT role
// vault-keycloak-operator at mount, bound to the operator's ServiceAccount
// and to the audience of the tokens it logs in with.
func (v *Vault) AllowOperatorJWTAt(ctx context.Context, mount, policyName, text, namespace, serviceAccount, audience string) error {
	return v.allowOperator(ctx, mount, policyName, text, map[string]any{
		"role_type":               authJWT,
		"user_claim":              "sub",
		"bound_audiences":         []string{audience},
		"bound_subject":           "system:serviceaccount:" + namespace + ":" + serviceAccount,
		"token_policies":          []string{policyName},
		"token_no_default_policy": true,
		"token_ttl":               3600,
	})
}

// TokenLifetime is how long the ServiceAccount tokens the harness asks for
// live: a projected volume's shortest (10 minutes), which the kubelet would
// renew. The bench, whose runs outlive it and which renews nothing, asks
// for longer: an expired token fails every Vault login made after it
// (the operator's, and the Vault reviewer's TokenReview).
var TokenLifetime = 10 * time.Minute

// ServiceAccountTokenFor requests a token of a ServiceAccount for an
// audience, as a projected volume gives a pod ("": the API server's own).
func ServiceAccountTokenFor(ctx context.Context, cfg *rest.Config, namespace, name, audience string) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	spec := authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(TokenLifetime / time.Second))}
	if audience != "" {
		spec.Audiences = []string{audience}
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token for %s/%s: %w", namespace, name, err)
	}
	KeepSecret(tr.Status.Token)
	return tr.Status.Token, nil
}

// ClusterPublicKeys are the API server's ServiceAccount token keys, PEM.
func ClusterPublicKeys(ctx context.Context, cfg *rest.Config) ([]string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the API server's JWKS: %w", err)
	}
	var jwks struct {
		Keys []struct {
			Kty, N, E, Crv, X, Y string
		} `json:"keys"`
	}
	if err := json.Unmarshal(raw, &jwks); err != nil {
		return nil, fmt.Errorf("read the API server's JWKS: %w", err)
	}
	var out []string
	for _, k := range jwks.Keys {
		var pub any
		switch k.Kty {
		case "RSA":
			pub = &rsa.PublicKey{N: b64Int(k.N), E: int(b64Int(k.E).Int64())}
		case "EC":
			curve := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384(), "P-521": elliptic.P521()}[k.Crv]
			if curve == nil {
				return nil, fmt.Errorf("JWKS key on curve %q", k.Crv)
			}
			// The uncompressed point: 0x04, then X and Y at the curve's size.
			size := (curve.Params().BitSize + 7) / 8
			point := append([]byte{4}, b64Int(k.X).FillBytes(make([]byte, size))...)
			point = append(point, b64Int(k.Y).FillBytes(make([]byte, size))...)
			if pub, err = ecdsa.ParseUncompressedPublicKey(curve, point); err != nil {
				return nil, fmt.Errorf("JWKS key: %w", err)
			}
		default:
			return nil, fmt.Errorf("JWKS key of type %q", k.Kty)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, err
		}
		out = append(out, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the API server publishes no ServiceAccount key")
	}
	return out, nil
}

func b64Int(s string) *big.Int {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	return new(big.Int).SetBytes(b)
}
