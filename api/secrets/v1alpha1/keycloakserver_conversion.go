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

// ConvertTo converts this KeycloakServer to the hub version (v1beta1).
func (src *KeycloakServer) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1beta1.KeycloakServer)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	spec, err := lossless.Convert(ConversionDataAnnotation, src, dst, src.Spec, serverSpecToHub, serverSpecFromHub)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = v1beta1.KeycloakServerStatus(*src.Status.DeepCopy())
	return nil
}

// ConvertFrom converts the hub version (v1beta1) to this version.
func (dst *KeycloakServer) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1beta1.KeycloakServer)
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	spec, err := lossless.Convert(ConversionDataAnnotation, src, dst, src.Spec, serverSpecFromHub, serverSpecToHub)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = KeycloakServerStatus(*src.Status.DeepCopy())
	return nil
}

func serverSpecToHub(in KeycloakServerSpec) v1beta1.KeycloakServerSpec {
	return v1beta1.KeycloakServerSpec{
		URL:                  in.URL,
		Realm:                in.Realm,
		CredentialsSecretRef: v1beta1.SecretReference{Name: in.CredentialsSecret},
		AllowedNamespaces:    in.AllowedNamespaces,
		Access:               convertGrants(in.Access, func(g AccessGrant) v1beta1.AccessGrant { return v1beta1.AccessGrant(g) }),
	}
}

// convertGrants maps the access grants, which have the same fields in both
// versions.
func convertGrants[In, Out any](in []In, one func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, g := range in {
		out[i] = one(g)
	}
	return out
}

func serverSpecFromHub(in v1beta1.KeycloakServerSpec) KeycloakServerSpec {
	return KeycloakServerSpec{
		URL:               in.URL,
		Realm:             in.Realm,
		CredentialsSecret: in.CredentialsSecretRef.Name,
		AllowedNamespaces: in.AllowedNamespaces,
		Access:            convertGrants(in.Access, func(g v1beta1.AccessGrant) AccessGrant { return AccessGrant(g) }),
	}
}
