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

package v1alpha1

import (
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/carbogame/vault-keycloak-operator/api/lossless"
)

// ConversionDataAnnotation holds what one version of a vault.exemple.com
// object cannot express, so that a round trip through it loses nothing.
const ConversionDataAnnotation = "vault.exemple.com/conversion-data"

// presetCapabilities are the capabilities each v1alpha1 preset stands for.
var presetCapabilities = map[VaultPolicyPreset][]v1beta1.Capability{
	PresetRead: {v1beta1.CapabilityRead, v1beta1.CapabilityList},
	PresetReadWrite: {
		v1beta1.CapabilityCreate, v1beta1.CapabilityRead, v1beta1.CapabilityUpdate,
		v1beta1.CapabilityPatch, v1beta1.CapabilityDelete, v1beta1.CapabilityList,
	},
}

// PresetCapabilities returns the capabilities a preset grants.
func PresetCapabilities(p VaultPolicyPreset) []v1beta1.Capability {
	return slices.Clone(presetCapabilities[p])
}

// ConvertTo converts this VaultApp to the hub version (v1beta1).
func (src *VaultApp) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1beta1.VaultApp)
	// An unknown preset has no capabilities to convert to. The schema's
	// enum would refuse it, but the API server converts a v1alpha1 request
	// for the mutating webhook before it validates the schema, and the
	// round trip back would quietly turn it into "read". Refuse it here,
	// by the schema's rule, so that the author sees the field they wrote.
	if p := src.Spec.VaultPolicy; p != "" && presetCapabilities[p] == nil {
		return field.NotSupported(field.NewPath("spec", "vaultPolicy"), p, []string{string(PresetRead), string(PresetReadWrite)})
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	spec, err := lossless.Convert(ConversionDataAnnotation, src, dst, src.Spec, specToHub, specFromHub)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = v1beta1.VaultAppStatus(*src.Status.DeepCopy())
	return nil
}

// ConvertFrom converts the hub version (v1beta1) to this version.
func (dst *VaultApp) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1beta1.VaultApp)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	spec, err := lossless.Convert(ConversionDataAnnotation, src, dst, src.Spec, specFromHub, specToHub)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = VaultAppStatus(*src.Status.DeepCopy())
	return nil
}

// specToHub grants the preset's capabilities on every secret path.
func specToHub(in VaultAppSpec) v1beta1.VaultAppSpec {
	var out v1beta1.VaultAppSpec
	for _, p := range in.SecretPaths {
		out.Policy.Rules = append(out.Policy.Rules, v1beta1.PolicyRule{
			Path:         p,
			Capabilities: PresetCapabilities(in.VaultPolicy),
		})
	}
	if in.ServiceAccount != "" {
		out.KubernetesAuth.ServiceAccounts = []string{in.ServiceAccount}
	}
	return out
}

// specFromHub picks the smallest preset that covers every rule; what the
// presets cannot say is kept by the lossless annotation.
func specFromHub(in v1beta1.VaultAppSpec) VaultAppSpec {
	var out VaultAppSpec
	for _, r := range in.Policy.Rules {
		out.SecretPaths = append(out.SecretPaths, r.Path)
		if out.VaultPolicy == "" {
			out.VaultPolicy = PresetRead
		}
		for _, c := range r.Capabilities {
			if !slices.Contains(presetCapabilities[PresetRead], c) {
				out.VaultPolicy = PresetReadWrite
			}
		}
	}
	if len(in.KubernetesAuth.ServiceAccounts) > 0 {
		out.ServiceAccount = in.KubernetesAuth.ServiceAccounts[0]
	}
	return out
}
