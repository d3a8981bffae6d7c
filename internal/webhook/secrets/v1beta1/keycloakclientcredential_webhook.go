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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/webhook/terms"
)

// Bounds and defaults of a KeycloakClientCredential.
const (
	DefaultRefreshInterval = 10 * time.Minute
	MinRefreshInterval     = 30 * time.Second
	MinRotationInterval    = time.Hour
	DefaultClientIDKey     = "clientId"
	DefaultClientSecretKey = "clientSecret"
)

// reservedLabels are the operator's ownership marks: a spec may not set them.
var reservedLabels = []string{"app.kubernetes.io/managed-by", "secrets.carbogame.com/owner-namespace", "secrets.carbogame.com/owner-name"}

// SetupKeycloakClientCredentialWebhookWithManager registers the defaulting,
// validating and conversion webhooks of KeycloakClientCredential.
func SetupKeycloakClientCredentialWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &secretsv1beta1.KeycloakClientCredential{}).
		WithDefaulter(&KeycloakClientCredentialDefaulter{}).
		WithValidator(&KeycloakClientCredentialValidator{Client: mgr.GetClient()}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-secrets-carbogame-com-v1beta1-keycloakclientcredential,mutating=true,failurePolicy=fail,sideEffects=None,groups=secrets.carbogame.com,resources=keycloakclientcredentials,verbs=create;update,versions=v1beta1,name=mkeycloakclientcredential-v1beta1.secrets.carbogame.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// KeycloakClientCredentialDefaulter fills in what a resource leaves out.
type KeycloakClientCredentialDefaulter struct{}

// Default sets the refresh interval, deletion policy, key names and Secret type.
func (d *KeycloakClientCredentialDefaulter) Default(_ context.Context, kcc *secretsv1beta1.KeycloakClientCredential) error {
	spec := &kcc.Spec
	if spec.RefreshInterval == nil {
		spec.RefreshInterval = &metav1.Duration{Duration: DefaultRefreshInterval}
	}
	if spec.DeletionPolicy == "" {
		spec.DeletionPolicy = secretsv1beta1.DeletionPolicyDelete
	}
	if spec.Target.Keys.ClientSecret == "" {
		spec.Target.Keys.ClientSecret = DefaultClientSecretKey
	}
	if spec.Target.Keys.ClientID == "" {
		spec.Target.Keys.ClientID = DefaultClientIDKey
	}
	if spec.Target.Type == "" {
		spec.Target.Type = corev1.SecretTypeOpaque
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-secrets-carbogame-com-v1beta1-keycloakclientcredential,mutating=false,failurePolicy=fail,sideEffects=None,groups=secrets.carbogame.com,resources=keycloakclientcredentials,verbs=create;update,versions=v1beta1,name=vkeycloakclientcredential-v1beta1.secrets.carbogame.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// KeycloakClientCredentialValidator rejects what cannot work or is not allowed.
type KeycloakClientCredentialValidator struct {
	Client client.Reader
}

// ValidateCreate checks a new resource.
func (v *KeycloakClientCredentialValidator) ValidateCreate(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	return v.validate(ctx, kcc)
}

// ValidateUpdate checks a changed spec; metadata-only updates (finalizers)
// and deletions pass.
func (v *KeycloakClientCredentialValidator) ValidateUpdate(ctx context.Context, old, kcc *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	if kcc.DeletionTimestamp != nil || equality.Semantic.DeepEqual(old.Spec, kcc.Spec) {
		return nil, nil
	}
	return v.validate(ctx, kcc)
}

// ValidateDelete lets every deletion through.
func (v *KeycloakClientCredentialValidator) ValidateDelete(context.Context, *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	return nil, nil
}

func (v *KeycloakClientCredentialValidator) validate(ctx context.Context, kcc *secretsv1beta1.KeycloakClientCredential) (admission.Warnings, error) {
	errs, warnings := ValidateKeycloakClientCredential(kcc)

	// The server must let this namespace use it; one that does not exist
	// yet is only a warning (it may be created next, as kubectl apply -f
	// dir/ does in no particular order).
	ref := field.NewPath("spec", "source", "serverRef", "name")
	var server secretsv1beta1.KeycloakServer
	switch err := v.Client.Get(ctx, client.ObjectKey{Name: kcc.Spec.Source.ServerRef.Name}, &server); {
	case apierrors.IsNotFound(err):
		warnings = append(warnings, fmt.Sprintf("KeycloakServer %q does not exist yet: nothing is synced until it does", kcc.Spec.Source.ServerRef.Name))
	case err != nil:
		return nil, apierrors.NewInternalError(fmt.Errorf("read KeycloakServer %q: %w", kcc.Spec.Source.ServerRef.Name, err))
	case !tenancy.ServerAllows(&server, kcc.Namespace):
		errs = append(errs, field.Forbidden(ref, fmt.Sprintf("KeycloakServer %q does not allow namespace %q (its spec.allowedNamespaces: %s)",
			server.Name, kcc.Namespace, listOrNone(server.Spec.AllowedNamespaces))))
	}
	if len(errs) == 0 {
		return warnings, nil
	}
	errs = terms.ForRequest(ctx, errs, secretsv1alpha1.GroupVersion.Version, credentialV1alpha1Fields)
	return warnings, apierrors.NewInvalid(secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredential").GroupKind(), kcc.Name, errs)
}

// ValidateKeycloakClientCredential checks the rules that need nothing but
// the object. Each error names the field and the rule.
func ValidateKeycloakClientCredential(kcc *secretsv1beta1.KeycloakClientCredential) (field.ErrorList, admission.Warnings) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	target := spec.Child("target")

	if ri := kcc.Spec.RefreshInterval; ri != nil && ri.Duration < MinRefreshInterval {
		errs = append(errs, field.Invalid(spec.Child("refreshInterval"), ri.Duration.String(), fmt.Sprintf("must be at least %s", MinRefreshInterval)))
	}
	if r := kcc.Spec.Rotation; r != nil && r.Interval.Duration < MinRotationInterval {
		errs = append(errs, field.Invalid(spec.Child("rotation", "interval"), r.Interval.Duration.String(), fmt.Sprintf("must be at least %s", MinRotationInterval)))
	}
	for _, msg := range validation.IsDNS1123Subdomain(kcc.Spec.Target.SecretName) {
		errs = append(errs, field.Invalid(target.Child("secretName"), kcc.Spec.Target.SecretName, "must be a Secret name: "+msg))
	}
	for i, ns := range kcc.Spec.Target.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(target.Child("namespaces").Index(i), ns, "must be a namespace name: "+msg))
		}
	}

	keys := kcc.Spec.Target.Keys
	used := map[string]string{}
	for _, k := range []struct{ name, value string }{
		{"clientId", keys.ClientID}, {"clientSecret", keys.ClientSecret}, {"issuerURL", keys.IssuerURL}, {"tokenURL", keys.TokenURL},
	} {
		if k.value == "" {
			continue
		}
		fld := target.Child("keys", k.name)
		for _, msg := range validation.IsConfigMapKey(k.value) {
			errs = append(errs, field.Invalid(fld, k.value, "must be a Secret key: "+msg))
		}
		if other, dup := used[k.value]; dup {
			errs = append(errs, field.Duplicate(fld, k.value+" (also the key of "+other+"; each value needs its own key)"))
		}
		used[k.value] = k.name
	}
	if keys.ClientSecret == "" && keys.ClientID == "" && keys.IssuerURL == "" && keys.TokenURL == "" {
		errs = append(errs, field.Required(target.Child("keys"), "at least one key must be set"))
	}

	errs = append(errs, metav1validation.ValidateLabels(kcc.Spec.Target.Labels, target.Child("labels"))...)
	for _, l := range reservedLabels {
		if _, ok := kcc.Spec.Target.Labels[l]; ok {
			errs = append(errs, field.Forbidden(target.Child("labels").Key(l), "is set by the operator to mark the Secrets it owns"))
		}
	}
	for k := range kcc.Spec.Target.Annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(target.Child("annotations").Key(k), k, msg))
		}
	}
	return errs, nil
}

var credentialV1alpha1Fields = []terms.Rename{
	{Hub: regexp.MustCompile(`^spec\.source\.serverRef\.name$`), Spoke: "spec.source.keycloakServer"},
	{Hub: regexp.MustCompile(`^spec\.target\.namespaces(.*)$`), Spoke: "spec.target.namespace$1"},
	{Hub: regexp.MustCompile(`^spec\.target\.keys\.(clientId|clientSecret)$`), Spoke: "spec.target.fields.$1"},
	{Hub: regexp.MustCompile(`^spec\.refreshInterval$`), Spoke: "spec.target.refreshPeriod"},
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(slices.Clone(items), ", ")
}
