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
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// Grants writes what namespace may ask of each server: the access entries
// of every VaultServer and KeycloakServer that list it. Servers are the
// admin's: a user who may not list them is told so.
func Grants(ctx context.Context, c client.Reader, namespace string, w io.Writer) error {
	o := &report{w: w}
	var vaults vaultv1beta1.VaultServerList
	var keycloaks secretsv1beta1.KeycloakServerList
	err := c.List(ctx, &vaults)
	if err == nil {
		err = c.List(ctx, &keycloaks)
	}
	if apierrors.IsForbidden(err) {
		return grantsSeenFromTheNamespace(ctx, c, namespace, o)
	}
	if err != nil {
		return fmt.Errorf("list the servers: %w", err)
	}
	o.printf("Namespace %s may ask:\n", namespace)
	none := true
	for i := range vaults.Items {
		s := &vaults.Items[i]
		if entries := tenancy.VaultAccessFor(s, namespace); len(entries) > 0 {
			none = false
			writeVaultGrant(o, s, namespace, "  ")
		}
	}
	for i := range keycloaks.Items {
		s := &keycloaks.Items[i]
		if entries := tenancy.KeycloakAccessFor(s, namespace); len(entries) > 0 {
			none = false
			writeKeycloakGrant(o, s, namespace, "  ")
		}
	}
	if none {
		o.printf("  nothing: no VaultServer or KeycloakServer lists %s in its spec.access (the cluster admin adds it)\n", namespace)
	}
	return o.err
}

// writeVaultGrant writes a VaultServer's grant to the namespace.
func writeVaultGrant(o *report, s *vaultv1beta1.VaultServer, namespace, indent string) {
	def := ""
	if s.Annotations[vaultv1beta1.DefaultServerAnnotation] == "true" {
		def = " (the default)"
	}
	o.printf("%sVaultServer %s%s:\n", indent, s.Name, def)
	for _, g := range tenancy.VaultAccessFor(s, namespace) {
		for _, p := range g.Paths {
			o.printf("%s  %s: %s\n", indent, strings.ReplaceAll(p.Template, vaultv1beta1.NamespaceVariable, namespace), capabilities(p.Capabilities))
		}
	}
	retain := "no"
	if tenancy.RetainGranted(s, namespace) {
		retain = "yes"
	}
	o.printf("%s  deletionPolicy Retain: %s; token TTL up to %s\n", indent, retain, tenancy.MaxTokenTTLOf(s, namespace))
}

// writeKeycloakGrant writes a KeycloakServer's grants to the namespace.
func writeKeycloakGrant(o *report, s *secretsv1beta1.KeycloakServer, namespace, indent string) {
	o.printf("%sKeycloakServer %s:\n", indent, s.Name)
	for _, g := range tenancy.KeycloakAccessFor(s, namespace) {
		rotate := ""
		if g.Rotate {
			rotate = ", and may rotate them"
		}
		o.printf("%s  clients %s in realms %s%s\n", indent, strings.Join(g.ClientIDs, ", "), strings.Join(g.Realms, ", "), rotate)
	}
}

func capabilities(caps []vaultv1beta1.Capability) string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = string(c)
	}
	return strings.Join(out, ", ")
}

// grantsSeenFromTheNamespace is what a user who may not read the servers
// (an app team) learns of the namespace's grants: what the operator found
// for each of the namespace's own VaultApps and credentials.
func grantsSeenFromTheNamespace(ctx context.Context, c client.Reader, namespace string, o *report) error {
	o.printf("Namespace %s: only the cluster admin may read the VaultServers and KeycloakServers and their grants.\n", namespace)
	o.printf("%s\n", "What the operator found for this namespace's resources:")
	var apps vaultv1beta1.VaultAppList
	if err := c.List(ctx, &apps, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list VaultApps in %s: %w", namespace, err)
	}
	var kccs secretsv1beta1.KeycloakClientCredentialList
	if err := c.List(ctx, &kccs, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list KeycloakClientCredentials in %s: %w", namespace, err)
	}
	for _, a := range apps.Items {
		writeFinding(o, "VaultApp "+a.Name, a.Status.Server, a.Status.Conditions, vaultv1beta1.TypeAccessGranted)
	}
	for _, k := range kccs.Items {
		writeFinding(o, "KeycloakClientCredential "+k.Name, k.Spec.Source.ServerRef.Name, k.Status.Conditions, secretsv1beta1.TypeSourceAvailable)
	}
	if len(apps.Items)+len(kccs.Items) == 0 {
		o.printf("%s\n", "  none yet: create one, and its conditions will say what its server grants")
	}
	return o.err
}

// writeFinding writes one resource's grant condition (Ready's when it has none yet).
func writeFinding(o *report, what, server string, conds []metav1.Condition, grantType string) {
	cond := meta.FindStatusCondition(conds, grantType)
	if cond == nil {
		cond = meta.FindStatusCondition(conds, "Ready")
	}
	on := ""
	if server != "" {
		on = " on " + server
	}
	if cond == nil {
		o.printf("  %s%s: not reconciled yet\n", what, on)
		return
	}
	o.printf("  %s%s: %s=%s %s: %s\n", what, on, cond.Type, cond.Status, cond.Reason, cond.Message)
}
