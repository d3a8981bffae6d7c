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
	"io/fs"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	crds "github.com/carbogame/vault-keycloak-operator/config/crd/bases"
)

// takenShortNames are short names of CRDs that clusters often have
// installed; one of ours among them would make `kubectl get` pick one of
// the two by discovery order, silently.
var takenShortNames = map[string]string{
	"vs": "Istio VirtualService", "dr": "Istio DestinationRule", "gw": "Istio Gateway", "se": "Istio ServiceEntry",
	"we": "Istio WorkloadEntry", "wg": "Istio WorkloadGroup", "pa": "Istio PeerAuthentication",
	"ra": "Istio RequestAuthentication", "ap": "Istio AuthorizationPolicy",
	"cert": "cert-manager Certificate", "certs": "cert-manager Certificate", "cr": "cert-manager CertificateRequest",
	"crs": "cert-manager CertificateRequest",
	"app": "Argo CD Application", "apps": "Argo CD Application", "appset": "Argo CD ApplicationSet",
	"appproj": "Argo CD AppProject",
	"xrd":     "Crossplane CompositeResourceDefinition", "comp": "Crossplane Composition",
	"ks": "Flux Kustomization", "hr": "Flux HelmRelease", "hc": "Flux HelmChart", "gitrepo": "Flux GitRepository",
	"helmrepo": "Flux HelmRepository", "ocirepo": "Flux OCIRepository",
	"kc": "Keycloak operator Keycloak",
}

// The plugin knows each kind by the names kubectl knows it by — the CRD's
// plural, singular and short names, and no other — and no short name is
// one a widely installed CRD already uses.
func TestAliasesAreTheCRDsNames(t *testing.T) {
	files, err := fs.Glob(crds.CRDs, "*.yaml")
	if err != nil || len(files) != 4 {
		t.Fatalf("CRDs embedded: %v, %v", files, err)
	}
	for _, file := range files {
		data, err := crds.CRDs.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		names := crd.Spec.Names
		want := append([]string{names.Singular, names.Plural}, names.ShortNames...)
		var got []string
		for _, k := range kinds {
			if k.kind.Name == names.Kind {
				got = slices.Sorted(slices.Values(k.names))
			}
		}
		if slices.Sort(want); !slices.Equal(got, want) {
			t.Errorf("%s: the plugin knows it as %v, kubectl as %v", names.Kind, got, want)
		}
		if len(names.ShortNames) == 0 {
			t.Errorf("%s has no short name", names.Kind)
		}
		for _, short := range names.ShortNames {
			if other, ok := takenShortNames[short]; ok {
				t.Errorf("%s's short name %q is %s's", names.Kind, short, other)
			}
		}
	}
}
