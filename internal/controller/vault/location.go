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

package vault

import (
	"strings"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// Location is where a server's VaultApps are written in Vault, and under
// which names and marks. Two servers of one Location write the same policy
// and role to the same mounts as the same cluster: a VaultApp may move
// from one to the other with nothing rewritten and nothing removed.
type Location struct {
	Address   string
	Namespace string
	KVMount   string
	// KVPath is each namespace's path in the KV mount ("": the namespace).
	KVPath string
	// AppAuthMount is where the VaultApps' roles go; AppAudience the
	// audience they bind on a JWT mount ("" on a Kubernetes one).
	AppAuthMount, AppAudience string
	// KubernetesAudience is the audience Kubernetes-auth roles bind: what
	// workloads' tokens carry, not where they are written (Same leaves it
	// out).
	KubernetesAudience  string
	Cluster, NamePrefix string
}

// LocationOf is where a VaultServer's VaultApps are written from this
// cluster (whose kube-system UID names it where the server names none).
func LocationOf(s *vaultv1beta1.VaultServer, clusterUID string) Location {
	id := identityOn(s, clusterUID)
	l := Location{Address: s.Spec.Address, Namespace: s.Spec.Namespace, KVMount: tenancy.KVMountOf(s), KVPath: tenancy.KVPathOf(s),
		Cluster: id.Cluster, NamePrefix: id.NamePrefix}
	switch auth := s.Spec.AppAuth; {
	case auth.JWT != nil:
		l.AppAuthMount, l.AppAudience = auth.JWT.Mount, auth.JWT.Audience
	case auth.Kubernetes != nil:
		l.AppAuthMount = auth.Kubernetes.Mount
	}
	return l
}

// Same reports whether two servers write to one place: an address differs
// only by a trailing slash, mounts by their slashes at either end.
func (l Location) Same(o Location) bool {
	norm := func(l Location) Location {
		l.Address = strings.TrimRight(l.Address, "/")
		l.KVMount = strings.Trim(l.KVMount, "/")
		if l.KVPath == vaultv1beta1.DefaultKVPath {
			l.KVPath = ""
		}
		l.KubernetesAudience = ""
		l.AppAuthMount = strings.Trim(l.AppAuthMount, "/")
		l.Namespace = strings.Trim(l.Namespace, "/")
		return l
	}
	return norm(l) == norm(o)
}
