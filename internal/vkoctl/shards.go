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
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
		kind := strings.TrimSuffix(listKind.Kind, "List") + "s"
		if apierrors.IsForbidden(err) {
			return fmt.Errorf("list %s in every namespace: %w (the split is a cluster admin's question: it needs list on %s cluster-wide)", kind, err, kind)
		}
		return fmt.Errorf("list %s: %w", kind, err)
	}
	for _, obj := range list.Items {
		l := perNamespace[obj.Namespace]
		add(&l)
		perNamespace[obj.Namespace] = l
	}
	return nil
}

// writeShards writes each shard's load and its share of the objects, and
// says so where the split is far from even: a shard with nothing to do, or
// one with much more than its part.
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
	var idle []string
	for i, l := range loads {
		o.printf("  shard %d: %d namespaces with objects, %d VaultApps, %d credentials (%.1f%% of the objects)\n",
			i, l.Namespaces, l.VaultApps, l.Credentials, share(l))
		if l.objects() == 0 {
			idle = append(idle, strconv.Itoa(i))
		}
	}
	even := 100 / float64(len(loads))
	switch len(idle) {
	case 0:
	case 1:
		o.printf("Uneven: shard %s would have nothing to reconcile.\n", idle[0])
	default:
		o.printf("Uneven: shards %s would have nothing to reconcile.\n", strings.Join(idle, ", "))
	}
	if share(loads[largest]) > unevenShare*even {
		o.printf("Uneven: shard %d would hold %.1f%% of the objects against an even %.1f%%; each shard's replicas need memory for their share.\n",
			largest, share(loads[largest]), even)
	}
	if len(loads) > 1 {
		o.printf("Shard 0 also runs the cluster's jobs (the servers, the orphan sweep, the storage migration), and every replica needs some 60–70 MiB whatever its share.\n")
	}
}
