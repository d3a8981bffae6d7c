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

package v1beta1

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/url"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/carbogame/vault-keycloak-operator/api/lossless"
	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/spokepaths"
)

// SetupKeycloakServerWebhookWithManager registers the defaulting, validating
// and conversion webhooks of KeycloakServer.
func SetupKeycloakServerWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &secretsv1beta1.KeycloakServer{}).
		WithDefaulter(&KeycloakServerDefaulter{}).
		WithValidator(&KeycloakServerValidator{}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-secrets-carbogame-com-v1beta1-keycloakserver,mutating=true,failurePolicy=fail,sideEffects=None,groups=secrets.carbogame.com,resources=keycloakservers,verbs=create;update,versions=v1beta1,name=mkeycloakserver-v1beta1.secrets.carbogame.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// KeycloakServerDefaulter fills in the login realm and the auth type.
type KeycloakServerDefaulter struct{}

// Default sets realm master and authType ClientCredentials.
func (d *KeycloakServerDefaulter) Default(_ context.Context, s *secretsv1beta1.KeycloakServer) error {
	if s.Spec.Realm == "" {
		s.Spec.Realm = tenancy.MasterRealm
	}
	if s.Spec.AuthType == "" {
		s.Spec.AuthType = secretsv1beta1.AuthClientCredentials
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-secrets-carbogame-com-v1beta1-keycloakserver,mutating=false,failurePolicy=fail,sideEffects=None,groups=secrets.carbogame.com,resources=keycloakservers,verbs=create;update,versions=v1beta1,name=vkeycloakserver-v1beta1.secrets.carbogame.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// KeycloakServerValidator rejects a server the operator could not use.
type KeycloakServerValidator struct{}

// ValidateCreate checks a new server.
func (v *KeycloakServerValidator) ValidateCreate(ctx context.Context, s *secretsv1beta1.KeycloakServer) (admission.Warnings, error) {
	if err := keycloakServerFits(nil, s); err != nil {
		return nil, err
	}
	return serverWarnings(s), validateServer(ctx, s)
}

// ValidateUpdate checks a changed server.
func (v *KeycloakServerValidator) ValidateUpdate(ctx context.Context, old, s *secretsv1beta1.KeycloakServer) (admission.Warnings, error) {
	if err := keycloakServerFits(old, s); err != nil {
		return nil, err
	}
	if s.DeletionTimestamp != nil {
		return nil, nil
	}
	return serverWarnings(s), validateServer(ctx, s)
}

// ValidateDelete lets every deletion through.
func (v *KeycloakServerValidator) ValidateDelete(context.Context, *secretsv1beta1.KeycloakServer) (admission.Warnings, error) {
	return nil, nil
}

func validateServer(ctx context.Context, s *secretsv1beta1.KeycloakServer) error {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if u, err := url.Parse(s.Spec.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, field.Invalid(spec.Child("url"), s.Spec.URL, "must be an absolute http or https URL, such as https://sso.example.com"))
	}
	for _, msg := range validation.IsDNS1123Subdomain(s.Spec.CredentialsSecretRef.Name) {
		errs = append(errs, field.Invalid(spec.Child("credentialsSecretRef", "name"), s.Spec.CredentialsSecretRef.Name, "must be a Secret name: "+msg))
	}
	if len(s.Spec.CABundle) > 0 && !x509.NewCertPool().AppendCertsFromPEM(s.Spec.CABundle) {
		errs = append(errs, field.Invalid(spec.Child("caBundle"), "(PEM)", "must hold at least one PEM-encoded certificate"))
	}
	errs = append(errs, crdschema.Validate(s)...)
	access := spec.Child("access")
	for i, g := range s.Spec.Access {
		for _, list := range []struct {
			name  string
			items []string
		}{{"namespaces", g.Namespaces}, {"realms", g.Realms}, {"clientIds", g.ClientIDs}} {
			for j, p := range list.items {
				errs = append(errs, tenancy.ValidatePattern(access.Index(i).Child(list.name).Index(j), p)...)
			}
		}
	}
	for i, ns := range s.Spec.AllowedNamespaces {
		if ns == "*" {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(spec.Child("allowedNamespaces").Index(i), ns, fmt.Sprintf("must be a namespace name or \"*\": %s", msg)))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	errs = spokepaths.ForRequest(ctx, errs, secretsv1alpha1.GroupVersion.Version, serverV1alpha1Fields)
	return apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakServer").GroupKind(), s.Name, errs)
}

// serverWarnings tells the admin what the allowedNamespaces field does now.
func serverWarnings(s *secretsv1beta1.KeycloakServer) admission.Warnings {
	warnings := admission.Warnings(tenancy.BroadGrantWarnings(s))
	if len(s.Spec.AllowedNamespaces) == 0 {
		return warnings
	}
	if tenancy.LegacyGrantsInEffect(s) {
		return append(warnings, fmt.Sprintf("spec.allowedNamespaces lets the namespaces listed read any client of this server (annotation %s): replace it with spec.access grants",
			tenancy.LegacyNamespaceGrantsAnnotation))
	}
	return append(warnings, fmt.Sprintf("spec.allowedNamespaces is deprecated and grants nothing by itself: grant access in spec.access (or, while upgrading, annotate the server %s=true)",
		tenancy.LegacyNamespaceGrantsAnnotation))
}

var serverV1alpha1Fields = []spokepaths.Rename{
	{Hub: regexp.MustCompile(`^spec\.credentialsSecretRef\.name$`), Spoke: "spec.credentialsSecret"},
}

// keycloakServerFits refuses a KeycloakServer whose v1alpha1 view would not fit its
// conversion data under the API server's bound on annotations (lossless.Fits).
func keycloakServerFits(old, obj *secretsv1beta1.KeycloakServer) error {
	var before lossless.Hub
	if old != nil {
		before = old
	}
	ferr := lossless.Fits(secretsv1alpha1.ConversionDataAnnotation, before, obj, func() (conversion.Convertible, lossless.Hub) {
		return &secretsv1alpha1.KeycloakServer{TypeMeta: metav1.TypeMeta{APIVersion: secretsv1alpha1.GroupVersion.String(), Kind: "KeycloakServer"}}, &secretsv1beta1.KeycloakServer{}
	})
	if ferr != nil {
		return apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakServer").GroupKind(), obj.Name, field.ErrorList{ferr})
	}
	return nil
}
