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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountTokens requests tokens of the ServiceAccount the operator
// runs as, for an audience (a TokenRequest): its login to a VaultServer
// through JWT auth. Which ServiceAccount is read from the mounted token.
type ServiceAccountTokens struct {
	// Client creates TokenRequests.
	Client client.Client
	// TokenPath is the operator's mounted ServiceAccount token.
	TokenPath string
}

var _ interface {
	Token(context.Context, string) (string, error)
} = (*ServiceAccountTokens)(nil)

// tokenLifetime is the shortest a TokenRequest may ask: a token serves one
// login, and Vault's token then lives on its own.
const tokenLifetime = 600

// Token returns a token of the operator's ServiceAccount for the audience.
func (t *ServiceAccountTokens) Token(ctx context.Context, audience string) (string, error) {
	namespace, name, err := serviceAccountOf(t.TokenPath)
	if err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{audience}, ExpirationSeconds: ptr.To[int64](tokenLifetime),
	}}
	if err := t.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("request a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return req.Status.Token, nil
}

// Issuer is the issuer of this cluster's ServiceAccount tokens, as the
// operator's own token says (its iss claim): what a JWT app role binds
// when the VaultServer names no issuer.
func (t *ServiceAccountTokens) Issuer() (string, error) {
	claims, err := tokenClaimsOf(t.TokenPath)
	if err != nil {
		return "", err
	}
	if claims.Iss == "" {
		return "", fmt.Errorf("the token at %s names no issuer", t.TokenPath)
	}
	return claims.Iss, nil
}

// Audience is the audience of this cluster's own ServiceAccount tokens
// (the first of the operator's mounted token's aud claim): what a
// Kubernetes-auth app role binds when the VaultServer names none, so that
// a pod's mounted token logs in and a token minted for another service
// does not.
func (t *ServiceAccountTokens) Audience() (string, error) {
	claims, err := tokenClaimsOf(t.TokenPath)
	if err != nil {
		return "", err
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(claims.Aud, &one) == nil && one != "":
		return one, nil
	case json.Unmarshal(claims.Aud, &many) == nil && len(many) > 0 && many[0] != "":
		return many[0], nil
	}
	return "", fmt.Errorf("the token at %s names no audience", t.TokenPath)
}

// serviceAccountOf reads the namespace and name of the ServiceAccount a
// token was issued to from its subject (system:serviceaccount:<ns>:<name>).
func serviceAccountOf(path string) (string, string, error) {
	claims, err := tokenClaimsOf(path)
	if err != nil {
		return "", "", err
	}
	rest, ok := strings.CutPrefix(claims.Sub, "system:serviceaccount:")
	namespace, name, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || namespace == "" || name == "" {
		return "", "", fmt.Errorf("the token at %s is not a ServiceAccount's (subject %q)", path, claims.Sub)
	}
	return namespace, name, nil
}

// tokenClaims are the claims of the operator's token it reads.
type tokenClaims struct {
	Sub string `json:"sub"`
	Iss string `json:"iss"`
	// Aud is a string or a list of them.
	Aud json.RawMessage `json:"aud"`
}

// tokenClaimsOf reads the claims of the token at path. The token is the
// operator's own, mounted by the kubelet: its claims are read, not
// verified.
func tokenClaimsOf(path string) (tokenClaims, error) {
	var claims tokenClaims
	raw, err := os.ReadFile(path)
	if err != nil {
		return claims, fmt.Errorf("read the operator's ServiceAccount token: %w", err)
	}
	parts := strings.Split(strings.TrimSpace(string(raw)), ".")
	if len(parts) != 3 {
		return claims, fmt.Errorf("the token at %s is not a JWT", path)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return claims, fmt.Errorf("the token at %s: %w", path, err)
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return claims, fmt.Errorf("the token at %s: %w", path, err)
	}
	return claims, nil
}
