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
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/carbogame/vault-keycloak-operator/api/lossless"
	"github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// ConversionDataAnnotation holds what one version of a secrets.carbogame.com
// object cannot express, so that a round trip through it loses nothing.
const ConversionDataAnnotation = "secrets.carbogame.com/conversion-data"

// ConvertTo converts this KeycloakClientCredential to the hub version (v1beta1).
func (src *KeycloakClientCredential) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1beta1.KeycloakClientCredential)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	spec, err := lossless.Convert(ConversionDataAnnotation, src, dst, src.Spec, credentialSpecToHub, credentialSpecFromHub)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = credentialStatusToHub(src.Status)
	return nil
}

// ConvertFrom converts the hub version (v1beta1) to this version.
func (dst *KeycloakClientCredential) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1beta1.KeycloakClientCredential)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	spec, err := lossless.Convert(ConversionDataAnnotation, src, dst, src.Spec, credentialSpecFromHub, credentialSpecToHub)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = credentialStatusFromHub(src.Status)
	return nil
}

func credentialSpecToHub(in KeycloakClientCredentialSpec) v1beta1.KeycloakClientCredentialSpec {
	return v1beta1.KeycloakClientCredentialSpec{
		Source: v1beta1.CredentialSource{
			ServerRef: v1beta1.ServerReference{Name: in.Source.KeycloakServer},
			Realm:     in.Source.Realm,
			ClientID:  in.Source.ClientID,
		},
		Target: v1beta1.TargetSpec{
			SecretName: in.Target.SecretName,
			Namespaces: in.Target.Namespace,
			Keys: v1beta1.SecretKeys{
				ClientID:     in.Target.Fields.ClientID,
				ClientSecret: in.Target.Fields.ClientSecret,
			},
		},
		RefreshInterval: in.Target.RefreshPeriod,
	}
}

func credentialSpecFromHub(in v1beta1.KeycloakClientCredentialSpec) KeycloakClientCredentialSpec {
	return KeycloakClientCredentialSpec{
		Source: Source{
			KeycloakServer: in.Source.ServerRef.Name,
			Realm:          in.Source.Realm,
			ClientID:       in.Source.ClientID,
		},
		Target: Target{
			SecretName:    in.Target.SecretName,
			Namespace:     in.Target.Namespaces,
			RefreshPeriod: in.RefreshInterval,
			Fields: Fields{
				ClientID:     in.Target.Keys.ClientID,
				ClientSecret: in.Target.Keys.ClientSecret,
			},
		},
	}
}

// The status is the same in both versions; only its element types differ.
func credentialStatusToHub(in KeycloakClientCredentialStatus) v1beta1.KeycloakClientCredentialStatus {
	in = *in.DeepCopy()
	out := v1beta1.KeycloakClientCredentialStatus{
		Conditions:          in.Conditions,
		LastSyncTime:        in.LastSyncTime,
		LastRotationTime:    in.LastRotationTime,
		Rotation:            (*v1beta1.RotationStatus)(in.Rotation),
		LastRefreshRequest:  in.LastRefreshRequest,
		LastRotationRequest: in.LastRotationRequest,
		ObservedGeneration:  in.ObservedGeneration,
	}
	for _, t := range in.Targets {
		out.Targets = append(out.Targets, v1beta1.TargetStatus(t))
	}
	for _, w := range in.Secrets {
		out.Secrets = append(out.Secrets, v1beta1.WrittenSecret(w))
	}
	return out
}

func credentialStatusFromHub(in v1beta1.KeycloakClientCredentialStatus) KeycloakClientCredentialStatus {
	in = *in.DeepCopy()
	out := KeycloakClientCredentialStatus{
		Conditions:          in.Conditions,
		LastSyncTime:        in.LastSyncTime,
		LastRotationTime:    in.LastRotationTime,
		Rotation:            (*RotationStatus)(in.Rotation),
		LastRefreshRequest:  in.LastRefreshRequest,
		LastRotationRequest: in.LastRotationRequest,
		ObservedGeneration:  in.ObservedGeneration,
	}
	for _, t := range in.Targets {
		out.Targets = append(out.Targets, TargetStatus(t))
	}
	for _, w := range in.Secrets {
		out.Secrets = append(out.Secrets, WrittenSecret(w))
	}
	return out
}
