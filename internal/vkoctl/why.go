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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	vaultwebhook "github.com/carbogame/vault-keycloak-operator/internal/webhook/vault/v1beta1"
)

// recentEvents is how many of an object's Events Why shows.
const recentEvents = 10

// Why writes why an object is or is not Ready: its conditions, its recent
// Events, and for a VaultApp or a credential the grant that applies to it
// or what the grant lacks, decided as the webhook decides it.
func Why(ctx context.Context, c client.Reader, ref, namespace string, now time.Time, w io.Writer) error {
	o := &report{w: w}
	kind, name, err := ParseRef(ref)
	if err != nil {
		return err
	}
	obj := kind.new()
	if err := c.Get(ctx, kind.key(namespace, name), obj); err != nil {
		return fmt.Errorf("get %s %s: %w", kind.Name, name, err)
	}
	where := name
	if kind.Namespaced {
		where = obj.GetNamespace() + "/" + name
	}
	o.printf("%s %s\n", kind.Name, where)
	writeConditions(o, conditionsOf(obj), obj.GetGeneration())
	if err := writeEvents(ctx, c, obj, now, o); err != nil {
		return err
	}
	switch obj := obj.(type) {
	case *vaultv1beta1.VaultApp:
		err = whyVaultGrant(ctx, c, obj, o)
	case *secretsv1beta1.KeycloakClientCredential:
		err = whyKeycloakGrant(ctx, c, obj, o)
	}
	if err != nil {
		return err
	}
	return o.err
}

func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *vaultv1beta1.VaultApp:
		return o.Status.Conditions
	case *vaultv1beta1.VaultServer:
		return o.Status.Conditions
	case *secretsv1beta1.KeycloakClientCredential:
		return o.Status.Conditions
	case *secretsv1beta1.KeycloakServer:
		return o.Status.Conditions
	}
	return nil
}

// writeConditions writes Ready first, then the others; a condition of an
// older generation is said to be so.
func writeConditions(o *report, conds []metav1.Condition, generation int64) {
	if len(conds) == 0 {
		o.printf("%s\n", "Conditions: none yet (the operator has not reconciled it: is it running?)")
		return
	}
	conds = slices.Clone(conds)
	slices.SortStableFunc(conds, func(a, b metav1.Condition) int {
		if a.Type == "Ready" {
			return -1
		}
		if b.Type == "Ready" {
			return 1
		}
		return strings.Compare(a.Type, b.Type)
	})
	o.printf("%s\n", "Conditions:")
	for _, cond := range conds {
		stale := ""
		if cond.ObservedGeneration != 0 && cond.ObservedGeneration < generation {
			stale = " (of an older spec: the operator has not caught up)"
		}
		o.printf("  %-16s %-7s %s%s\n", cond.Type, cond.Status, cond.Reason, stale)
		if cond.Message != "" {
			o.printf("  %-16s %s\n", "", cond.Message)
		}
	}
}

// writeEvents writes the object's latest Events, oldest first.
func writeEvents(ctx context.Context, c client.Reader, obj client.Object, now time.Time, o *report) error {
	var list corev1.EventList
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		if apierrors.IsForbidden(err) {
			o.printf("Events: you may not list Events in %s\n", ns)
			return nil
		}
		return fmt.Errorf("list Events: %w", err)
	}
	var events []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.UID == obj.GetUID() {
			events = append(events, e)
		}
	}
	slices.SortFunc(events, func(a, b corev1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
	if len(events) > recentEvents {
		events = events[len(events)-recentEvents:]
	}
	if len(events) == 0 {
		o.printf("%s\n", "Events: none (they expire after an hour)")
		return nil
	}
	o.printf("%s\n", "Events:")
	for _, e := range events {
		count := ""
		if e.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Count)
		}
		o.printf("  %-8s %-7s %-24s %s%s\n", now.Sub(lastSeen(e)).Round(time.Second), e.Type, e.Reason, e.Message, count)
	}
	return nil
}

func lastSeen(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// whyVaultGrant writes the VaultServer the VaultApp uses, its grant to the
// namespace, and what of the spec the grant refuses now.
func whyVaultGrant(ctx context.Context, c client.Reader, app *vaultv1beta1.VaultApp, o *report) error {
	server, err := vaultwebhook.ServerFor(ctx, c, app, &app.Status)
	if apierrors.IsForbidden(err) {
		where := "AccessGranted above is what the operator found it covers"
		if v := app.Status.Vault; v != nil {
			where += fmt.Sprintf("; a workload logs in at %s/v1/%s as role %s and reads %s/data/%s<path>", v.Address, v.LoginPath, v.Role, v.KVMount, v.KVPrefix)
		}
		name := app.Status.Server
		if name == "" && app.Spec.ServerRef != nil {
			name = app.Spec.ServerRef.Name
		}
		o.printf("Grant:\n  %s\n", adminOnly("VaultServer", name, where))
		return nil
	}
	if err != nil {
		return serverError(err)
	}
	o.printf("%s\n", "Grant:")
	if server == nil {
		o.printf("%s\n", "  no VaultServer: the VaultApp names none that exists, and none is the default (or it uses the operator's environment Vault)")
		return nil
	}
	if !tenancy.VaultServerGrantsNamespace(server, app.Namespace) {
		o.printf("  missing: VaultServer %s lists namespace %s in no entry of its spec.access (the cluster admin adds it)\n", server.Name, app.Namespace)
		return nil
	}
	writeVaultGrant(o, server, app.Namespace, "  ")
	ns := &corev1.Namespace{}
	ns.Name = app.Namespace
	_, refused := tenancy.DecideVaultGrant(app, ns, server)
	writeRefusals(o, refused)
	return nil
}

// whyKeycloakGrant writes the KeycloakServer's grants to the namespace and
// whether they cover the credential's client (and its rotation).
func whyKeycloakGrant(ctx context.Context, c client.Reader, kcc *secretsv1beta1.KeycloakClientCredential, o *report) error {
	var server secretsv1beta1.KeycloakServer
	o.printf("%s\n", "Grant:")
	switch err := c.Get(ctx, client.ObjectKey{Name: kcc.Spec.Source.ServerRef.Name}, &server); {
	case apierrors.IsForbidden(err):
		o.printf("  %s\n", adminOnly("KeycloakServer", kcc.Spec.Source.ServerRef.Name, "SourceAvailable above is what the operator found they cover"))
		return nil
	case apierrors.IsNotFound(err):
		o.printf("  missing: KeycloakServer %s does not exist\n", kcc.Spec.Source.ServerRef.Name)
		return nil
	case err != nil:
		return serverError(err)
	}
	if !tenancy.GrantsNamespace(&server, kcc.Namespace) {
		o.printf("  missing: KeycloakServer %s lists namespace %s in no entry of its spec.access (the cluster admin adds it)\n", server.Name, kcc.Namespace)
		return nil
	}
	writeKeycloakGrant(o, &server, kcc.Namespace, "  ")
	refused := tenancy.CheckKeycloakAccess(&server, tenancy.AccessRequestOf(kcc), tenancy.LoginOf(&server, ""))
	writeRefusals(o, refused)
	return nil
}

func writeRefusals(o *report, refused field.ErrorList) {
	if len(refused) == 0 {
		o.printf("%s\n", "  covers everything the spec asks")
		return
	}
	o.printf("%s\n", "  does not cover:")
	for _, e := range refused {
		o.printf("    %s\n", e.Error())
	}
}

// adminOnly says, to a user who may not read servers (an app team with the
// shipped editor role), that the grants are the cluster admin's, and where
// the operator's own finding is.
func adminOnly(kind, name, where string) string {
	if name == "" {
		return fmt.Sprintf("only the cluster admin may read %ss and their grants: %s", kind, where)
	}
	return fmt.Sprintf("only the cluster admin may read %s %s and its grants: %s", kind, name, where)
}

func serverError(err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("read the server's grants: %w (they are the cluster admin's: ask them, or for a view role)", err)
	}
	return fmt.Errorf("read the server's grants: %w", err)
}
