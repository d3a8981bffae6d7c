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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/crdschema"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// SetupVaultServerWebhookWithManager registers the validating webhook of
// VaultServer (it serves one version: no conversion).
func SetupVaultServerWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &vaultv1beta1.VaultServer{}).
		WithValidator(&VaultServerValidator{}).
		Complete()
}

// +kubebuilder:webhook:path=/validate-vault-exemple-com-v1beta1-vaultserver,mutating=false,failurePolicy=fail,sideEffects=None,groups=vault.exemple.com,resources=vaultservers,verbs=create;update,versions=v1beta1,name=vvaultserver-v1beta1.vault.exemple.com,admissionReviewVersions=v1,matchPolicy=Equivalent

// VaultServerValidator refuses a server whose grants could reach what no
// namespace may have (sys/, auth/, identity/), and warns of grants that
// reach further than they seem.
type VaultServerValidator struct{}

// ValidateCreate checks a new server.
func (v *VaultServerValidator) ValidateCreate(_ context.Context, s *vaultv1beta1.VaultServer) (admission.Warnings, error) {
	return tenancy.VaultServerWarnings(s), validateVaultServer(s)
}

// ValidateUpdate checks a changed server; one being deleted passes.
func (v *VaultServerValidator) ValidateUpdate(_ context.Context, _, s *vaultv1beta1.VaultServer) (admission.Warnings, error) {
	if s.DeletionTimestamp != nil {
		return nil, nil
	}
	return tenancy.VaultServerWarnings(s), validateVaultServer(s)
}

// ValidateDelete lets every deletion through.
func (v *VaultServerValidator) ValidateDelete(context.Context, *vaultv1beta1.VaultServer) (admission.Warnings, error) {
	return nil, nil
}

func validateVaultServer(s *vaultv1beta1.VaultServer) error {
	errs := append(tenancy.ValidateVaultServer(s), crdschema.Validate(s)...)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(vaultv1beta1.GroupVersion.WithKind("VaultServer").GroupKind(), s.Name, errs)
}
