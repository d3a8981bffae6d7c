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

package vkoctl

import (
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// Request is an on-demand request the operator honours once per id: read
// Vault or Keycloak now (refresh), or regenerate a client secret (rotate).
type Request string

const (
	Refresh Request = "refresh"
	Rotate  Request = "rotate"
)

// annotation is where the request goes on the kind; "" when the kind has
// no such request.
func (r Request) annotation(kind Kind) string {
	switch {
	case kind.Name == kindVaultApp && r == Refresh:
		return vaultv1beta1.RefreshRequestAnnotation
	case kind.Name == kindCredential && r == Refresh:
		return secretsv1beta1.RefreshRequestAnnotation
	case kind.Name == kindCredential && r == Rotate:
		return secretsv1beta1.RotationRequestAnnotation
	}
	return ""
}

// RequestID is a new request's id: the time, to the millisecond (two
// requests in one second are two requests), which the status echoes back.
func RequestID(now time.Time) string { return now.UTC().Format("20060102T150405.000Z") }

// Ask sets the request's annotation to id by a merge patch, as the user
// running it (the webhooks refuse a rotation the namespace may not ask,
// with their own message). The operator answers in the status
// (lastRefreshRequest, lastRotationRequest) and with an Event.
func Ask(ctx context.Context, c client.Client, r Request, ref, namespace, id string, w io.Writer) error {
	kind, name, err := ParseRef(ref)
	if err != nil {
		return err
	}
	key := r.annotation(kind)
	if key == "" {
		return fmt.Errorf("%s: a %s takes no %s request (refresh: vaultapp or kcc; rotate: kcc)", ref, kind.Name, r)
	}
	obj := kind.new()
	obj.SetNamespace(namespace)
	obj.SetName(name)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, key, id)
	if err := c.Patch(ctx, obj, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		return fmt.Errorf("%s %s/%s: %w", r, namespace, name, err)
	}
	_, err = fmt.Fprintf(w, "%s %s/%s: asked (%s=%s); kubectl vko why %s -n %s shows the answer\n", r, namespace, name, key, id, ref, namespace)
	return err
}
