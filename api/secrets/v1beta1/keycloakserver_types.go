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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthType is how the operator logs in to Keycloak.
// +kubebuilder:validation:Enum=ClientCredentials;Password
type AuthType string

const (
	// AuthClientCredentials uses a service-account client: keys clientId and clientSecret.
	AuthClientCredentials AuthType = "ClientCredentials"
	// AuthPassword uses an admin user through admin-cli: keys username and password.
	AuthPassword AuthType = "Password"
)

// SecretReference names a Secret in the operator's own namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// KeycloakServerSpec says where a Keycloak is and how to log in to it.
type KeycloakServerSpec struct {
	// URL of the Keycloak server, for example https://sso.example.com.
	// +kubebuilder:validation:Pattern=`^https?://`
	URL string `json:"url"`

	// Realm the operator logs in to. Defaults to master.
	// +optional
	Realm string `json:"realm,omitempty"`

	// CredentialsSecretRef is a Secret in the operator's namespace holding
	// clientId/clientSecret (ClientCredentials) or username/password (Password).
	CredentialsSecretRef SecretReference `json:"credentialsSecretRef"`

	// AuthType says which credentials the Secret holds. Defaults to ClientCredentials.
	// +optional
	AuthType AuthType `json:"authType,omitempty"`

	// CABundle is a PEM bundle that verifies the server's certificate.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`

	// Access grants namespaces the right to read (and, separately, to
	// rotate) the secrets of some clients in some realms. Nothing is
	// readable that no entry grants. The operator's own login client and the
	// admin clients of Keycloak are never readable, whatever an entry says.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Access []AccessGrant `json:"access,omitempty"`

	// AllowedNamespaces is deprecated: it grants nothing by itself. Only on
	// a server annotated secrets.carbogame.com/legacy-namespace-grants=true
	// does it still let the namespaces listed read any client (never rotate
	// one), as before spec.access existed. "*" means every namespace.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	AllowedNamespaces []string `json:"allowedNamespaces,omitempty"`
}

// AccessGrant lets some namespaces use some clients of a KeycloakServer.
// Each list holds exact names, prefix patterns ("team-a-*"), or "*" alone.
type AccessGrant struct {
	// Namespaces whose KeycloakClientCredentials the grant applies to.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Namespaces []string `json:"namespaces"`

	// Realms whose clients may be read.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	Realms []string `json:"realms"`

	// ClientIDs whose secrets may be read.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	ClientIDs []string `json:"clientIds"`

	// Rotate also lets these namespaces regenerate the secrets in Keycloak
	// (spec.rotation of a KeycloakClientCredential).
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

// KeycloakServer is a Keycloak instance the operator may read client secrets from.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
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
