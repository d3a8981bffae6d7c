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

// Package v1beta1 holds the admission webhooks of the secrets.carbogame.com
// group, registered on the hub version with matchPolicy Equivalent.
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
	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/defaults"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/lookup"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/spokepaths"
)

// SetupKeycloakClientCredentialWebhookWithManager registers the defaulting,
// validating and conversion webhooks of KeycloakClientCredential.
// operatorNamespace holds the KeycloakServers' credentials Secrets: the
// validator reads the login clientId there, to refuse it by name.
func SetupKeycloakClientCredentialWebhookWithManager(mgr ctrl.Manager, operatorNamespace string) error {
	return ctrl.NewWebhookManagedBy(mgr, &secretsv1beta1.KeycloakClientCredential{}).
		WithDefaulter(&KeycloakClientCredentialDefaulter{}).
		WithValidator(&KeycloakClientCredentialValidator{Client: lookup.CacheFirst{Cache: mgr.GetClient(), API: mgr.GetAPIReader(), FromAPI: isKeycloakServer}, Secrets: mgr.GetAPIReader(), OperatorNamespace: operatorNamespace}).
		Complete()
}

// isKeycloakServer: the servers a tenant names are read from the API server
// alone (lookup.CacheFirst.FromAPI).
func isKeycloakServer(o client.Object) bool {
	_, server := o.(*secretsv1beta1.KeycloakServer)
	return server
}

// +kubebuilder:webhook:path=/mutate-secrets-carbogame-com-v1beta1-keycloakclientcredential,mutating=true,failurePolicy=fail,sideEffects=None,groups=secrets.carbogame.com,resources=keycloakclientcredentials,verbs=create;update,versions=v1beta1,name=mkeycloakclientcredential-v1beta1.secrets.carbogame.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// KeycloakClientCredentialDefaulter fills in what a resource leaves out.
type KeycloakClientCredentialDefaulter struct{}

// Default sets the refresh interval, deletion policy, key names and Secret type.
func (d *KeycloakClientCredentialDefaulter) Default(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) error {
	defaults.AddFinalizerOnCreate(ctx, kcc, secretsv1beta1.CleanupFinalizer)
	kcc.SetDefaults()
	return nil
}

// +kubebuilder:webhook:path=/validate-secrets-carbogame-com-v1beta1-keycloakclientcredential,mutating=false,failurePolicy=fail,sideEffects=None,groups=secrets.carbogame.com,resources=keycloakclientcredentials,verbs=create;update,versions=v1beta1,name=vkeycloakclientcredential-v1beta1.secrets.carbogame.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// KeycloakClientCredentialValidator rejects what cannot work or is not allowed.
type KeycloakClientCredentialValidator struct {
	// Client reads KeycloakServers and Namespaces.
	Client client.Reader
	// Secrets reads a KeycloakServer's credentials Secret (outside the
	// manager's label-filtered cache); nil skips the login-client check,
	// which the controller makes anyway.
	Secrets           client.Reader
	OperatorNamespace string
}

// ValidateCreate checks a new resource.
func (v *KeycloakClientCredentialValidator) ValidateCreate(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	if err := keycloakClientCredentialFits(nil, kcc); err != nil {
		return nil, err
	}
	if err := v.requestsAllowed(ctx, nil, kcc); err != nil {
		return nil, err
	}
	return v.validate(ctx, kcc)
}

// ValidateUpdate checks a changed spec. A spec may not change once the
// resource is being deleted: nothing validated it then, and the cleanup
// must act on what was granted.
func (v *KeycloakClientCredentialValidator) ValidateUpdate(ctx context.Context, old, kcc *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	if err := keycloakClientCredentialFits(old, kcc); err != nil {
		return nil, err
	}
	if err := v.requestsAllowed(ctx, old, kcc); err != nil {
		return nil, err
	}
	if equality.Semantic.DeepEqual(old.Spec, kcc.Spec) {
		return nil, nil
	}
	if old.DeletionTimestamp != nil {
		return nil, apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential").GroupKind(), kcc.Name,
			field.ErrorList{field.Forbidden(field.NewPath("spec"), "may not change while the resource is being deleted")})
	}
	return v.validate(ctx, kcc)
}

// ValidateDelete lets every deletion through.
func (v *KeycloakClientCredentialValidator) ValidateDelete(context.Context, *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	return nil, nil
}

func (v *KeycloakClientCredentialValidator) validate(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	errs := tenancy.ValidateKeycloakClientCredential(kcc)
	errs = append(errs, crdschema.Validate(kcc)...)
	var warnings admission.Warnings

	// The server must grant this namespace the client (and the rotation);
	// one that does not exist yet is only a warning (it may be created
	// next, as kubectl apply -f dir/ does in no particular order), and one
	// that grants the namespace nothing gets the same answer: the tenant
	// learns of no server she may not use.
	var server secretsv1beta1.KeycloakServer
	switch err := v.Client.Get(ctx, client.ObjectKey{Name: kcc.Spec.Source.ServerRef.Name}, &server); {
	case apierrors.IsNotFound(err) || (err == nil && !tenancy.GrantsNamespace(&server, kcc.Namespace)):
		warnings = append(warnings, tenancy.UnknownKeycloakServer(kcc.Spec.Source.ServerRef.Name, kcc.Namespace))
	case err != nil:
		return nil, apierrors.NewInternalError(fmt.Errorf("read KeycloakServer %q: %w", kcc.Spec.Source.ServerRef.Name, err))
	case len(tenancy.ValidateRealm(nil, kcc.Spec.Source.Realm)) > 0:
		// Already refused above; grants are checked for plain realm names.
	default:
		errs = append(errs, tenancy.CheckKeycloakAccess(&server, tenancy.AccessRequestOf(kcc), tenancy.LoginOf(&server, v.loginClientID(ctx, &server)))...)
	}

	// Every target namespace must accept the Secret's type.
	if t := kcc.Spec.Target.Type; t != "" && t != corev1.SecretTypeOpaque {
		for i, name := range tenancy.TargetNamespaces(kcc) {
			var ns corev1.Namespace
			if err := v.Client.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
				if apierrors.IsNotFound(err) {
					continue // nothing is written into a namespace that does not exist
				}
				return nil, apierrors.NewInternalError(fmt.Errorf("read namespace %q: %w", name, err))
			}
			if msg := tenancy.SecretTypeRefusal(&ns, t); msg != "" {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "target", "type"), fmt.Sprintf("target %d: %s", i, msg)))
			}
		}
	}
	if len(errs) == 0 {
		return warnings, nil
	}
	errs = spokepaths.ForRequest(ctx, errs, secretsv1alpha1.GroupVersion.Version, credentialV1alpha1Fields)
	return warnings, apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential").GroupKind(), kcc.Name, errs)
}

// loginClientID reads the clientId the server logs in with, "" when it
// cannot be read (the controller checks with the client it really uses).
func (v *KeycloakClientCredentialValidator) loginClientID(ctx context.Context, server *secretsv1beta1.KeycloakServer) string {
	if v.Secrets == nil || v.OperatorNamespace == "" || server.Spec.AuthType == secretsv1beta1.AuthPassword {
		return ""
	}
	var creds corev1.Secret
	if err := v.Secrets.Get(ctx, client.ObjectKey{Namespace: v.OperatorNamespace, Name: server.Spec.CredentialsSecretRef.Name}, &creds); err != nil {
		return ""
	}
	return string(creds.Data["clientId"])
}

var credentialV1alpha1Fields = []spokepaths.Rename{
	{Hub: regexp.MustCompile(`^spec\.source\.serverRef\.name$`), Spoke: "spec.source.keycloakServer"},
	{Hub: regexp.MustCompile(`^spec\.target\.namespaces(.*)$`), Spoke: "spec.target.namespace$1"},
	{Hub: regexp.MustCompile(`^spec\.target\.keys\.(clientId|clientSecret)$`), Spoke: "spec.target.fields.$1"},
	{Hub: regexp.MustCompile(`^spec\.refreshInterval$`), Spoke: "spec.target.refreshPeriod"},
}

// keycloakClientCredentialFits refuses a KeycloakClientCredential whose v1alpha1 view would not fit its
// conversion data under the API server's bound on annotations (lossless.Fits).
func keycloakClientCredentialFits(old, obj *secretsv1beta1.KeycloakClientCredential) error {
	var before lossless.Hub
	if old != nil {
		before = old
	}
	ferr := lossless.Fits(secretsv1alpha1.ConversionDataAnnotation, before, obj, func() (conversion.Convertible, lossless.Hub) {
		return &secretsv1alpha1.KeycloakClientCredential{TypeMeta: metav1.TypeMeta{APIVersion: secretsv1alpha1.GroupVersion.String(), Kind: "KeycloakClientCredential"}}, &secretsv1beta1.KeycloakClientCredential{}
	})
	if ferr != nil {
		return apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential").GroupKind(), obj.Name, field.ErrorList{ferr})
	}
	return nil
}

// requestsAllowed refuses a new refresh or rotation request whose id breaks
// the rule, and a new rotation request from a namespace that no grant of
// the KeycloakServer lets rotate the client (the operator would not act on
// it: better said now, to the one asking).
func (v *KeycloakClientCredentialValidator) requestsAllowed(ctx context.Context, old, kcc *secretsv1beta1.KeycloakClientCredential) error {
	var before map[string]string
	if old != nil {
		before = old.Annotations
	}
	var errs field.ErrorList
	for _, key := range []string{secretsv1beta1.RefreshRequestAnnotation, secretsv1beta1.RotationRequestAnnotation} {
		if id := ondemand.Changed(before, kcc.Annotations, key); id != "" {
			if ferr := ondemand.Validate(key, id); ferr != nil {
				errs = append(errs, ferr)
			}
		}
	}
	if len(errs) == 0 && ondemand.Changed(before, kcc.Annotations, secretsv1beta1.RotationRequestAnnotation) != "" {
		refusal, err := v.rotationRequestRefusal(ctx, old, kcc)
		if err != nil {
			return err
		}
		if refusal != nil {
			errs = append(errs, refusal)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential").GroupKind(), kcc.Name, errs)
}

// rotationRequestRefusal says why a new rotation request may not be made
// now (too soon after the last rotation, no server, no rotate grant); nil
// when it may.
func (v *KeycloakClientCredentialValidator) rotationRequestRefusal(ctx context.Context, old, kcc *secretsv1beta1.KeycloakClientCredential) (*field.Error, error) {
	path := field.NewPath("metadata", "annotations").Key(secretsv1beta1.RotationRequestAnnotation)
	if old != nil && time.Now().Before(old.RotationRequestAllowedAt()) {
		return field.Forbidden(path, fmt.Sprintf("the client secret was rotated at %s: ask again from %s (at most one rotation on request per %s)",
			old.Status.LastRotationTime.UTC().Format(time.RFC3339), old.RotationRequestAllowedAt().UTC().Format(time.RFC3339), secretsv1beta1.RotationRequestGap)), nil
	}
	var server secretsv1beta1.KeycloakServer
	switch err := v.Client.Get(ctx, client.ObjectKey{Name: kcc.Spec.Source.ServerRef.Name}, &server); {
	case apierrors.IsNotFound(err):
		return field.Forbidden(path, tenancy.UnknownKeycloakServer(kcc.Spec.Source.ServerRef.Name, kcc.Namespace)), nil
	case err != nil:
		return nil, apierrors.NewInternalError(fmt.Errorf("read KeycloakServer %q: %w", kcc.Spec.Source.ServerRef.Name, err))
	}
	if why := tenancy.RotationRefusal(&server, tenancy.AccessRequestOf(kcc), tenancy.LoginOf(&server, v.loginClientID(ctx, &server))); why != "" {
		return field.Forbidden(path, why), nil
	}
	return nil, nil
}
