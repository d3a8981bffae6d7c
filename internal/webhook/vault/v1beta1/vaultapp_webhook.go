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

// Package v1beta1 holds the admission webhooks of VaultApp. They are
// registered on the hub version with matchPolicy Equivalent, so the API
// server converts a v1alpha1 request to v1beta1 before it calls them.
package v1beta1

import (
	"context"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/carbogame/vault-keycloak-operator/api/lossless"
	"github.com/carbogame/vault-keycloak-operator/api/ondemand"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/defaults"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/lookup"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/spokepaths"
)

// SetupVaultAppWebhookWithManager registers the defaulting, validating and
// conversion webhooks of VaultApp.
func SetupVaultAppWebhookWithManager(mgr ctrl.Manager) error {
	reader := lookup.CacheFirst{Cache: mgr.GetClient(), API: mgr.GetAPIReader(), FromAPI: isVaultServer}
	return ctrl.NewWebhookManagedBy(mgr, &vaultv1beta1.VaultApp{}).
		WithDefaulter(&VaultAppDefaulter{Client: reader}).
		WithValidator(&VaultAppValidator{Client: reader}).
		Complete()
}

// isVaultServer: the servers a tenant names are read from the API server
// alone (lookup.CacheFirst.FromAPI).
func isVaultServer(o client.Object) bool {
	_, server := o.(*vaultv1beta1.VaultServer)
	return server
}

// +kubebuilder:webhook:path=/mutate-vault-exemple-com-v1beta1-vaultapp,mutating=true,failurePolicy=fail,sideEffects=None,groups=vault.exemple.com,resources=vaultapps,verbs=create;update,versions=v1beta1,name=mvaultapp-v1beta1.vault.exemple.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// VaultAppDefaulter fills in what a VaultApp leaves out.
type VaultAppDefaulter struct {
	// Client reads the VaultServer whose maxTokenTTL may lower the default
	// token TTL; none is read when nil.
	Client client.Reader
}

// Default sets the ServiceAccount (the VaultApp's name), refresh interval,
// token TTL and deletion policy.
func (d *VaultAppDefaulter) Default(ctx context.Context, app *vaultv1beta1.VaultApp) error {
	defaults.AddFinalizerOnCreate(ctx, app, vaultv1beta1.CleanupFinalizer)
	ttl := vaultv1beta1.DefaultTokenTTL
	if app.Spec.KubernetesAuth.TokenTTL == nil {
		ttl = d.defaultTokenTTL(ctx, app)
	}
	app.SetDefaults(ttl)
	return nil
}

// defaultTokenTTL is DefaultTokenTTL, or the VaultServer's cap for the
// namespace when it is lower: a VaultApp that asks for no TTL gets one it
// is granted. A server that cannot be read leaves the default (the
// validator then says what is wrong).
func (d *VaultAppDefaulter) defaultTokenTTL(ctx context.Context, app *vaultv1beta1.VaultApp) time.Duration {
	if d.Client == nil || !app.DeletionTimestamp.IsZero() {
		return vaultv1beta1.DefaultTokenTTL
	}
	server, err := ServerFor(ctx, d.Client, app, nil)
	if err != nil {
		return vaultv1beta1.DefaultTokenTTL
	}
	return tenancy.DefaultTokenTTLOn(server, app.Namespace)
}

// +kubebuilder:webhook:path=/validate-vault-exemple-com-v1beta1-vaultapp,mutating=false,failurePolicy=fail,sideEffects=None,groups=vault.exemple.com,resources=vaultapps,verbs=create;update,versions=v1beta1,name=vvaultapp-v1beta1.vault.exemple.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// VaultAppValidator rejects a VaultApp that asks for more than its
// namespace may have, or whose paths leave the namespace's prefix.
type VaultAppValidator struct {
	Client client.Reader
}

// ValidateCreate checks a new VaultApp.
func (v *VaultAppValidator) ValidateCreate(ctx context.Context, app *vaultv1beta1.VaultApp) (admission.Warnings, error) {
	if err := vaultAppFits(nil, app); err != nil {
		return nil, err
	}
	if err := refreshRequestValid(nil, app); err != nil {
		return nil, err
	}
	return v.validate(ctx, app, nil)
}

// ValidateUpdate checks a changed spec. An update that leaves the spec as it
// was (finalizers, labels) is let through: the admin may have tightened the
// namespace's grants since the VaultApp was admitted, and that must not
// block its finalizer or its deletion; the controller then narrows what is
// live in Vault to the grant. A spec may not change once the VaultApp is
// being deleted (a switch to Retain then would keep grants nobody checked).
func (v *VaultAppValidator) ValidateUpdate(ctx context.Context, old, app *vaultv1beta1.VaultApp) (admission.Warnings, error) {
	if err := vaultAppFits(old, app); err != nil {
		return nil, err
	}
	if err := refreshRequestValid(old, app); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(old.Spec, app.Spec) {
		return nil, nil
	}
	if old.DeletionTimestamp != nil {
		return nil, apierrors.NewInvalid(vaultv1beta1.GroupVersion.WithKind("VaultApp").GroupKind(), app.Name,
			field.ErrorList{field.Forbidden(field.NewPath("spec"), "may not change while the VaultApp is being deleted")})
	}
	// The schema's rule holds for v1beta1 requests; this one for every
	// version (a v1alpha1 request carries serverRef in its annotation).
	if !equality.Semantic.DeepEqual(old.Spec.ServerRef, app.Spec.ServerRef) {
		return nil, apierrors.NewInvalid(vaultv1beta1.GroupVersion.WithKind("VaultApp").GroupKind(), app.Name,
			field.ErrorList{field.Forbidden(field.NewPath("spec", "serverRef"), "cannot change: delete the VaultApp and create it again")})
	}
	return v.validate(ctx, app, &old.Status)
}

// ValidateDelete lets every deletion through.
func (v *VaultAppValidator) ValidateDelete(context.Context, *vaultv1beta1.VaultApp) (admission.Warnings, error) {
	return nil, nil
}

// validate checks a VaultApp; written is the status of the object it
// replaces (nil for a new one): where it wrote is where it stays.
func (v *VaultAppValidator) validate(ctx context.Context, app *vaultv1beta1.VaultApp, written *vaultv1beta1.VaultAppStatus) (admission.Warnings, error) {
	var ns corev1.Namespace
	if err := v.Client.Get(ctx, client.ObjectKey{Name: app.Namespace}, &ns); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("read namespace %q for its Vault grants: %w", app.Namespace, err))
	}
	errs := tenancy.ValidateVaultApp(app)
	errs = append(errs, crdschema.Validate(app)...)
	server, err := ServerFor(ctx, v.Client, app, written)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var warnings admission.Warnings
	switch {
	case unknownServer(app, written, server):
		// A server not created yet is admitted, as GitOps may apply it
		// later; one that grants the namespace nothing answers the same,
		// so that a tenant learns of no server she may not use. The
		// controller checks again before each write.
		warnings = append(warnings, tenancy.UnknownVaultServer(app.Spec.ServerRef.Name, app.Namespace))
	case server != nil || (app.Spec.ServerRef == nil && (written == nil || written.Server == "")):
		_, refused := tenancy.DecideVaultGrant(app, &ns, server)
		errs = append(errs, refused...)
	}
	if len(errs) == 0 {
		return warnings, nil
	}
	errs = spokepaths.ForRequest(ctx, errs, vaultv1alpha1.GroupVersion.Version, v1alpha1Fields)
	return warnings, apierrors.NewInvalid(vaultv1beta1.GroupVersion.WithKind("VaultApp").GroupKind(), app.Name, errs)
}

// unknownServer reports whether the VaultApp names a server it never wrote
// to that does not exist, is being deleted or grants its namespace nothing
// (the controller's ServerNotFound for each).
func unknownServer(app *vaultv1beta1.VaultApp, written *vaultv1beta1.VaultAppStatus, server *vaultv1beta1.VaultServer) bool {
	if app.Spec.ServerRef == nil || (written != nil && written.WroteToVault()) {
		return false
	}
	return server == nil || !server.DeletionTimestamp.IsZero() || !tenancy.VaultServerGrantsNamespace(server, app.Namespace)
}

// ServerFor is the VaultServer the VaultApp will use: the one it names,
// else the default one; nil when it names one that does not exist yet (the
// controller's to report) or uses the environment's Vault.
func ServerFor(ctx context.Context, reader client.Reader, app *vaultv1beta1.VaultApp, written *vaultv1beta1.VaultAppStatus) (*vaultv1beta1.VaultServer, error) {
	name := ""
	switch {
	case app.Spec.ServerRef != nil:
		name = app.Spec.ServerRef.Name
	case written != nil && written.Server != "":
		name = written.Server
	case written != nil && written.LastSyncTime != nil:
		return nil, nil // wrote to the environment's Vault, and stays there
	}
	if name != "" {
		var s vaultv1beta1.VaultServer
		switch err := reader.Get(ctx, client.ObjectKey{Name: name}, &s); {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read VaultServer %q for its grants: %w", name, err)
		}
		return &s, nil
	}
	var list vaultv1beta1.VaultServerList
	if err := reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list VaultServers for the default one: %w", err)
	}
	var def *vaultv1beta1.VaultServer
	for i := range list.Items {
		if list.Items[i].Annotations[vaultv1beta1.DefaultServerAnnotation] == "true" {
			if def != nil {
				return nil, nil // two defaults: the controller says so
			}
			def = &list.Items[i]
		}
	}
	return def, nil
}

// v1alpha1Fields maps the hub's field paths to the ones a v1alpha1 user wrote.
var v1alpha1Fields = []spokepaths.Rename{
	{Hub: regexp.MustCompile(`^spec\.policy\.rules\[(\d+)\]\.path$`), Spoke: "spec.secretPaths[$1]"},
	{Hub: regexp.MustCompile(`^spec\.policy\.rules\[\d+\]\.capabilities$`), Spoke: "spec.vaultPolicy"},
	{Hub: regexp.MustCompile(`^spec\.kubernetesAuth\.serviceAccounts\[0\]$`), Spoke: "spec.serviceAccount"},
}

// vaultAppFits refuses a VaultApp whose v1alpha1 view would not fit its
// conversion data under the API server's bound on annotations (lossless.Fits).
func vaultAppFits(old, obj *vaultv1beta1.VaultApp) error {
	var before lossless.Hub
	if old != nil {
		before = old
	}
	ferr := lossless.Fits(vaultv1alpha1.ConversionDataAnnotation, before, obj, func() (conversion.Convertible, lossless.Hub) {
		return &vaultv1alpha1.VaultApp{TypeMeta: metav1.TypeMeta{APIVersion: vaultv1alpha1.GroupVersion.String(), Kind: "VaultApp"}}, &vaultv1beta1.VaultApp{}
	})
	if ferr != nil {
		return apierrors.NewInvalid(vaultv1beta1.GroupVersion.WithKind("VaultApp").GroupKind(), obj.Name, field.ErrorList{ferr})
	}
	return nil
}

// refreshRequestValid refuses a new refresh request whose id breaks the
// rule (anyone who may edit the VaultApp may ask for a refresh).
func refreshRequestValid(old, app *vaultv1beta1.VaultApp) error {
	var before map[string]string
	if old != nil {
		before = old.Annotations
	}
	id := ondemand.Changed(before, app.Annotations, vaultv1beta1.RefreshRequestAnnotation)
	if id == "" {
		return nil
	}
	if ferr := ondemand.Validate(vaultv1beta1.RefreshRequestAnnotation, id); ferr != nil {
		return apierrors.NewInvalid(vaultv1beta1.GroupVersion.WithKind("VaultApp").GroupKind(), app.Name, field.ErrorList{ferr})
	}
	return nil
}
