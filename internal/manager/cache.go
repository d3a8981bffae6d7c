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

package manager

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1alpha1"
	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1alpha1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1alpha1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	secretscontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/secrets"
)

// What the manager's cache holds: the operator's objects, and of Secrets
// only the operator's own (as digests) and the credentials Secrets'
// metadata.

// NewScheme returns a scheme with the built-in types and every version of
// both API groups.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(vaultv1alpha1.AddToScheme(s))
	utilruntime.Must(vaultv1beta1.AddToScheme(s))
	utilruntime.Must(secretsv1alpha1.AddToScheme(s))
	utilruntime.Must(secretsv1beta1.AddToScheme(s))
	return s
}

// CacheOptions limit the manager's cache of Secrets to the ones with the
// operator's labels: it watches those (a deleted or edited target is
// repaired at once) without holding every Secret of the cluster in memory.
// Anyone may forge the labels, so the cache holds those Secrets as digests
// (secrets.DigestSecret), never their values: a forged Secret costs a few
// bytes per key. Other Secrets (a KeycloakServer's credentials, a CA, a
// foreign Secret in the way) are read from the API server directly; see
// credentialsCache for how the credentials are watched.
func CacheOptions() cache.Options { return cacheOptionsOf(secretscontroller.ManagedSecrets()) }

// cacheOptionsOf are CacheOptions holding the Secrets secrets selects.
func cacheOptionsOf(secrets labels.Selector) cache.Options {
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: secrets, Transform: secretscontroller.DigestSecret},
		},
		// managedFields are never read, and are most of an object's
		// metadata: a forged Secret with the operator's labels costs less.
		DefaultTransform: cache.TransformStripManagedFields(),
	}
}

// credentialsCache is a second cache, of the operator's namespace alone,
// through which the KeycloakServer controller watches the metadata of the
// credentials Secrets (never their data), and every shard the ConfigMaps
// of rotations. Nil without a namespace.
func credentialsCache(mgr ctrl.Manager, namespace string) (cache.Cache, error) {
	if namespace == "" {
		return nil, nil
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		// Of ConfigMaps, the rotations' alone (secrets.RotationSignal).
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Label: secretscontroller.RotationsConfigMaps()}},
	})
	if err != nil {
		return nil, fmt.Errorf("cache of the operator's namespace %s (credentials Secrets, ConfigMaps of rotations): %w", namespace, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}
