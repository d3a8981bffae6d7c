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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KeycloakServerSpec is the v1alpha1 spec: client-credentials login only.
type KeycloakServerSpec struct {
	// URL of the Keycloak server.
	URL string `json:"url"`
	// Realm the operator logs in to. Defaults to master.
	// +optional
	Realm string `json:"realm,omitempty"`
	// CredentialsSecret is the name of a Secret in the operator's namespace
	// holding clientId and clientSecret.
	CredentialsSecret string `json:"credentialsSecret"`
	// Access grants namespaces the right to read (and, separately, to
	// rotate) the secrets of some clients; see v1beta1.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Access []AccessGrant `json:"access,omitempty"`
	// AllowedNamespaces is deprecated and grants nothing by itself; see v1beta1.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`
}

// AccessGrant lets some namespaces use some clients; the same as v1beta1's.
type AccessGrant struct {
	// Namespaces whose KeycloakClientCredentials the grant applies to.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Namespaces []string `json:"namespaces"`
	// Realms whose clients may be read.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	Realms []string `json:"realms"`
	// ClientIDs whose secrets may be read.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	ClientIDs []string `json:"clientIds"`
	// Rotate also lets these namespaces regenerate the secrets.
	// +optional
	Rotate bool `json:"rotate,omitempty"`
}

// KeycloakServerStatus is what the operator observed.
type KeycloakServerStatus struct {
	// Conditions: Connected.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Version of the Keycloak server, as it reports it.
	// +optional
	Version string `json:"version,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// KeycloakServer is the deprecated v1alpha1 form; use v1beta1.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:deprecatedversion:warning="secrets.carbogame.com/v1alpha1 KeycloakServer is deprecated; use secrets.carbogame.com/v1beta1"
// +kubebuilder:resource:scope=Cluster,shortName=kcs,categories=keycloak
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Connected",type=string,JSONPath=`.status.conditions[?(@.type=="Connected")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Connected")].reason`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KeycloakServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeycloakServerSpec   `json:"spec,omitempty"`
	Status KeycloakServerStatus `json:"status,omitempty"`
}

// KeycloakServerList is a list of KeycloakServers.
// +kubebuilder:object:root=true
type KeycloakServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KeycloakServer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KeycloakServer{}, &KeycloakServerList{})
}
