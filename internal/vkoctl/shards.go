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
	"context"
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// ShardLoad is what one shard would reconcile.
type ShardLoad struct {
	Namespaces, VaultApps, Credentials int
}

func (l ShardLoad) objects() int { return l.VaultApps + l.Credentials }

// SplitByShard gives each shard of count the namespaces it owns (by the
// API server's hash of the name) with their objects; perNamespace holds
// each namespace's VaultApps and credentials.
func SplitByShard(perNamespace map[string]ShardLoad, count int) []ShardLoad {
	loads := make([]ShardLoad, count)
	for ns, l := range perNamespace {
		i := shard.Of(ns, count)
		loads[i].Namespaces++
		loads[i].VaultApps += l.VaultApps
		loads[i].Credentials += l.Credentials
	}
	return loads
}

// unevenShare is how far past an even split the largest shard may go
// before the report says so.
const unevenShare = 1.5

// Shards writes how the cluster's VaultApps and credentials would split
// over count shards (--shards). The split follows a hash of the namespace
// names, uneven for names that differ only at their end (team-1,
// team-2…): each shard's memory and work follow its share, so an admin
// sizes the shards by the cluster's own names.
func Shards(ctx context.Context, c client.Reader, count string, w io.Writer) error {
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > 256 {
		return fmt.Errorf("shards %q: want a shard count from 1 to 256", count)
	}
	perNamespace := map[string]ShardLoad{}
	if err := countByNamespace(ctx, c, vaultv1beta1.GroupVersion.WithKind("VaultAppList"), perNamespace,
		func(l *ShardLoad) { l.VaultApps++ }); err != nil {
		return err
	}
	if err := countByNamespace(ctx, c, secretsv1beta1.GroupVersion.WithKind("KeycloakClientCredentialList"), perNamespace,
		func(l *ShardLoad) { l.Credentials++ }); err != nil {
		return err
	}
	o := &report{w: w}
	writeShards(o, SplitByShard(perNamespace, n))
	return o.err
}

// countByNamespace counts the objects of a list kind by namespace, from
// their metadata alone.
func countByNamespace(ctx context.Context, c client.Reader, listKind schema.GroupVersionKind, perNamespace map[string]ShardLoad, add func(*ShardLoad)) error {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(listKind)
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("list %s: %w", listKind.Kind, err)
	}
	for _, obj := range list.Items {
		l := perNamespace[obj.Namespace]
		add(&l)
		perNamespace[obj.Namespace] = l
	}
	return nil
}

// writeShards writes each shard's load and its share of the objects, and
// says so when the largest share is far from an even split.
func writeShards(o *report, loads []ShardLoad) {
	total, largest := 0, 0
	for i, l := range loads {
		total += l.objects()
		if l.objects() > loads[largest].objects() {
			largest = i
		}
	}
	o.printf("VaultApps and credentials over %d shards (by the API server's hash of the namespace name):\n", len(loads))
	if total == 0 {
		o.printf("  none in the cluster\n")
		return
	}
	share := func(l ShardLoad) float64 { return 100 * float64(l.objects()) / float64(total) }
	for i, l := range loads {
		o.printf("  shard %d: %d namespaces, %d VaultApps, %d credentials (%.0f%% of the objects)\n", i, l.Namespaces, l.VaultApps, l.Credentials, share(l))
	}
	if even := 100 / float64(len(loads)); share(loads[largest]) > unevenShare*even {
		o.printf("Uneven: shard %d would hold %.0f%% of the objects against an even %.0f%%; each shard's replicas need memory for their share.\n",
			largest, share(loads[largest]), even)
	}
}
