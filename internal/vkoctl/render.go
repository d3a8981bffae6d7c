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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
	vaultcontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
	vaultwebhook "github.com/carbogame/vault-keycloak-operator/internal/webhook/vault/v1beta1"
)

// Render writes what the VaultApp or credential in manifest would produce,
// without creating it: the Vault policy and role, or the target Secrets'
// shape (keys, labels, annotations; never a value). The grants are read
// from the cluster; what they refuse is said first, and left out of the
// policy as the controller leaves it out.
func Render(ctx context.Context, c client.Reader, manifest []byte, namespace string, w io.Writer) error {
	o := &report{w: w}
	hub, err := decode(manifest)
	if err != nil {
		return err
	}
	if hub.GetNamespace() == "" {
		hub.SetNamespace(namespace)
	}
	switch hub := hub.(type) {
	case *vaultv1beta1.VaultApp:
		err = renderVaultApp(ctx, c, hub, o)
	case *secretsv1beta1.KeycloakClientCredential:
		err = renderCredential(ctx, c, hub, o)
	default:
		return fmt.Errorf("render: a %T has nothing to render (a VaultApp or a KeycloakClientCredential)", hub)
	}
	if err != nil {
		return err
	}
	return o.err
}

// decode reads a VaultApp or a KeycloakClientCredential of either version,
// in the stored version's terms.
func decode(manifest []byte) (client.Object, error) {
	var u unstructured.Unstructured
	if err := yaml.Unmarshal(manifest, &u.Object); err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	var spoke conversion.Convertible
	var hub client.Object
	switch gvk := u.GroupVersionKind(); gvk {
	case vaultv1beta1.GroupVersion.WithKind("VaultApp"):
		hub = &vaultv1beta1.VaultApp{}
	case vaultv1alpha1.GroupVersion.WithKind("VaultApp"):
		spoke, hub = &vaultv1alpha1.VaultApp{}, &vaultv1beta1.VaultApp{}
	case secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential"):
		hub = &secretsv1beta1.KeycloakClientCredential{}
	case secretsv1alpha1.GroupVersion.WithKind("KeycloakClientCredential"):
		spoke, hub = &secretsv1alpha1.KeycloakClientCredential{}, &secretsv1beta1.KeycloakClientCredential{}
	default:
		return nil, fmt.Errorf("render: %s %q is not a VaultApp or KeycloakClientCredential of vault.exemple.com or secrets.carbogame.com", gvk.GroupVersion(), gvk.Kind)
	}
	target := runtime.Object(hub)
	if spoke != nil {
		target = spoke
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, target, true); err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	if spoke != nil {
		if err := spoke.ConvertTo(hub.(conversion.Hub)); err != nil {
			return nil, fmt.Errorf("convert to %s: %w", hub.GetObjectKind().GroupVersionKind().GroupVersion(), err)
		}
	}
	return hub, nil
}

func renderVaultApp(ctx context.Context, c client.Reader, app *vaultv1beta1.VaultApp, o *report) error {
	server, err := vaultwebhook.ServerFor(ctx, c, app, nil)
	if err != nil {
		return serverError(err)
	}
	if server == nil {
		return fmt.Errorf("VaultApp %s/%s: no VaultServer to render for (spec.serverRef names none that exists, and none is annotated %s=true)", app.Namespace, app.Name, vaultv1beta1.DefaultServerAnnotation)
	}
	app.SetDefaults(tenancy.DefaultTokenTTLOn(server, app.Namespace))
	o.printf("# VaultApp %s/%s on VaultServer %s\n", app.Namespace, app.Name, server.Name)
	if errs := tenancy.ValidateVaultApp(app); len(errs) > 0 {
		writeRefused(o, "invalid", errs)
		return nil
	}
	ns := &corev1.Namespace{}
	ns.Name = app.Namespace
	granted, refused := tenancy.DecideVaultGrant(app, ns, server)
	if len(refused) > 0 {
		writeRefused(o, "refused by the grants (the webhook refuses the VaultApp; the rest below is what a VaultApp within them gets)", refused)
	}
	cluster, err := clusterName(ctx, c, server)
	if err != nil {
		return err
	}
	name := tenancy.PolicyName(server.Spec.NamePrefix, app.Namespace, app.Name)
	owner := vaultclient.Owner{Namespace: app.Namespace, Name: app.Name, UID: "<uid once created>", Cluster: cluster}
	policy, role := vaultcontroller.Desired(app, tenancy.KVOf(server), name, owner, granted)
	o.printf("---\n# Vault ACL policy %s\n%s", name, policy)
	o.printf("---\n# Vault role %s on auth/%s\n", name, appAuthMount(server))
	out, err := yaml.Marshal(map[string]any{
		"bound_service_account_names":      role.ServiceAccounts,
		"bound_service_account_namespaces": []string{role.Namespace},
		"token_policies":                   role.Policies,
		"token_ttl":                        role.TTL.String(),
		"token_max_ttl":                    role.MaxTTL.String(),
	})
	if err != nil {
		return err
	}
	_, err = o.Write(out)
	return err
}

// clusterName is the cluster in the policy's mark: the server's, else the
// kube-system namespace's UID, as the operator names it.
func clusterName(ctx context.Context, c client.Reader, server *vaultv1beta1.VaultServer) (string, error) {
	if server.Spec.Cluster != "" {
		return server.Spec.Cluster, nil
	}
	var ns corev1.Namespace
	switch err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, &ns); {
	case apierrors.IsForbidden(err):
		return "<this cluster's kube-system UID>", nil
	case err != nil:
		return "", fmt.Errorf("read the kube-system namespace for the cluster's name: %w", err)
	}
	return string(ns.UID), nil
}

func appAuthMount(server *vaultv1beta1.VaultServer) string {
	switch {
	case server.Spec.AppAuth.Kubernetes != nil:
		return server.Spec.AppAuth.Kubernetes.Mount
	case server.Spec.AppAuth.JWT != nil:
		return server.Spec.AppAuth.JWT.Mount
	}
	return "kubernetes"
}

func renderCredential(ctx context.Context, c client.Reader, kcc *secretsv1beta1.KeycloakClientCredential, o *report) error {
	kcc.SetDefaults()
	o.printf("# KeycloakClientCredential %s/%s: client %s of realm %s on KeycloakServer %s\n",
		kcc.Namespace, kcc.Name, kcc.Spec.Source.ClientID, kcc.Spec.Source.Realm, kcc.Spec.Source.ServerRef.Name)
	if errs := tenancy.ValidateKeycloakClientCredential(kcc); len(errs) > 0 {
		writeRefused(o, "invalid", errs)
		return nil
	}
	var server secretsv1beta1.KeycloakServer
	if err := c.Get(ctx, client.ObjectKey{Name: kcc.Spec.Source.ServerRef.Name}, &server); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("KeycloakServer %s does not exist", kcc.Spec.Source.ServerRef.Name)
		}
		return serverError(err)
	}
	if refused := tenancy.CheckKeycloakAccess(&server, tenancy.AccessRequestOf(kcc), tenancy.LoginOf(&server, "")); len(refused) > 0 {
		writeRefused(o, "refused by the grants (the webhook refuses the credential)", refused)
	}
	for _, s := range secretscontroller.TargetShapes(kcc, server.Spec.URL) {
		// The namespace must consent, or it gets no Secret.
		var ns corev1.Namespace
		switch err := c.Get(ctx, client.ObjectKey{Name: s.Namespace}, &ns); {
		case apierrors.IsNotFound(err):
			o.printf("# namespace %s does not exist: no Secret is written there until it does, and consents\n", s.Namespace)
			continue
		case err != nil:
			o.printf("# namespace %s: its consent cannot be read (%v); it gets this Secret only if it consents to %s\n", s.Namespace, err, kcc.Namespace)
		case !tenancy.ConsentsTo(&ns, kcc.Namespace):
			o.printf("# namespace %s does not consent to Secrets from %s: none is written there\n", s.Namespace, kcc.Namespace)
			continue
		}
		o.printf("---\n# Secret %s/%s (values are what each key will hold, never a value)\n", s.Namespace, s.Name)
		shape := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": string(s.Type),
			"metadata":   map[string]any{"name": s.Name, "namespace": s.Namespace, "labels": s.Labels, "annotations": shapeAnnotations(s.Annotations)},
			"stringData": stringData(s.Data)}
		out, err := yaml.Marshal(shape)
		if err != nil {
			return err
		}
		if _, err := o.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// shapeAnnotations drops the digest of the data (of placeholders: it would
// mislead) and the owner's UID (not known yet).
func shapeAnnotations(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if k != secretscontroller.DataHashAnnotation && k != secretscontroller.OwnerUIDAnnotation {
			out[k] = v
		}
	}
	return out
}

func stringData(data map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}

func writeRefused(o *report, what string, errs field.ErrorList) {
	o.printf("# %s:\n", what)
	for _, e := range errs {
		for _, line := range strings.Split(e.Error(), "\n") {
			o.printf("#   %s\n", line)
		}
	}
}
