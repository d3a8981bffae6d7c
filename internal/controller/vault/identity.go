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
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Identity is who this operator is in a Vault that other clusters' operators
// (and people, and other tools) write to as well. Every mark it writes names
// its cluster; it adopts, repairs or removes only what a mark names as its
// own, so two clusters on one Vault never take or sweep each other's
// policies.
type Identity struct {
	// Cluster is written in every mark: the admin's name for the cluster,
	// or the kube-system namespace's UID when none is given (stable for
	// the life of the cluster, and unique).
	Cluster string
	// Aliases are other names of this cluster that its marks may carry:
	// the kube-system UID, once the admin has named the cluster, so that
	// naming it later adopts what was written before.
	Aliases []string
	// ID tells this cluster from another given the same name by mistake
	// (a copied VaultServer): the kube-system namespace's UID. Marks carry
	// it beside a name that differs from it.
	ID string
	// Predecessors are the IDs of clusters this one replaces (a rebuild
	// under the same name), as the admin names them on the VaultServer:
	// what their marks hold is this cluster's to adopt, repair and remove.
	Predecessors []string
	// NamePrefix, when set, goes into every policy and role name
	// (app-<prefix>.<namespace>.<name>), so that the same VaultApp in two
	// clusters gets two policies and two roles.
	NamePrefix string
}

// Validate checks the identity as flags or the environment gave it.
func (id Identity) Validate() error {
	var errs []error
	if msgs := validation.IsDNS1123Label(id.Cluster); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("cluster name %q must be a DNS label: %v", id.Cluster, msgs))
	}
	if id.NamePrefix != "" {
		errs = append(errs, tenancy.ValidateNamePrefix(id.NamePrefix))
	}
	return errors.Join(errs...)
}

// is reports whether a mark's cluster is this one. A mark without a
// cluster (an earlier release's) is nobody's in particular: see ownsPolicy
// and the orphan sweep for what may be done with it.
func (id Identity) is(cluster string) bool {
	return cluster != "" && (cluster == id.Cluster || slices.Contains(id.Aliases, cluster))
}

// wrote reports whether this cluster wrote a mark: its ID is this one's
// (whatever name the cluster had then: renamed after a clash, it keeps
// what it wrote), or its name is and it carries no ID (written before IDs
// were, or under the kube-system UID, which is the ID). Only what this
// cluster wrote is ever swept or deleted.
func (id Identity) wrote(o vaultclient.Owner) bool {
	return (id.ID != "" && o.ClusterID == id.ID) || (id.is(o.Cluster) && o.ClusterID == "")
}

// owns reports whether a mark is this cluster's to adopt and repair: one
// it wrote, or one a predecessor the admin named wrote. Nothing tells a
// gone cluster from a live one of the same name for sure (an older
// release, or one the Vault refuses to register, makes no claim), so the
// admin says it.
func (id Identity) owns(o vaultclient.Owner) bool {
	return id.wrote(o) || (o.ClusterID != "" && slices.Contains(id.Predecessors, o.ClusterID))
}

// namesake reports whether a mark names this cluster's name but is
// another live cluster's of that name: left alone.
func (id Identity) namesake(o vaultclient.Owner) bool {
	return id.is(o.Cluster) && !id.owns(o)
}

// policyName is the name of a VaultApp's policy and role in this cluster.
func (id Identity) policyName(namespace, name string) string {
	return tenancy.PolicyName(id.NamePrefix, namespace, name)
}

// ownNames is how every name the operator gives in this cluster begins.
func (id Identity) ownNames() string {
	if id.NamePrefix == "" {
		return "app."
	}
	return "app-" + id.NamePrefix + "."
}
