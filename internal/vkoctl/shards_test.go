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
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// Names that differ only in their last characters fall unevenly: the API
// server's FNV-1a hash barely moves its high bits for them. The split is
// the hash's, so these figures are what any replica of any release sees.
func TestSplitByShard(t *testing.T) {
	names := func(prefix string, n int) map[string]ShardLoad {
		m := map[string]ShardLoad{}
		for i := range n {
			m[fmt.Sprintf("%s-%02d", prefix, i)] = ShardLoad{VaultApps: 2, Credentials: 1}
		}
		return m
	}
	cases := []struct {
		name   string
		ns     map[string]ShardLoad
		count  int
		spread []int // namespaces by shard
	}{
		{"one shard holds everything", names("fleet", 50), 1, []int{50}},
		{"fifty counters fall into one shard of four", names("fleet", 50), 4, []int{0, 0, 50, 0}},
		{"a thousand counters leave a shard of four empty", names("fleet", 1000), 4, []int{400, 300, 300, 0}},
		{"five thousand counters", names("fleet", 5000), 4, []int{2000, 1300, 500, 1200}},
		{"no namespace", nil, 3, []int{0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loads := SplitByShard(tc.ns, tc.count)
			for i, l := range loads {
				if l.Namespaces != tc.spread[i] || l.VaultApps != 2*l.Namespaces || l.Credentials != l.Namespaces {
					t.Errorf("shard %d: %+v, want %d namespaces with 2 VaultApps and a credential each", i, l, tc.spread[i])
				}
			}
		})
	}
}

// kubectl vko shards N lists both kinds by namespace and says where the
// split is uneven; a count out of range is refused by name.
func TestShardsReport(t *testing.T) {
	var objs []client.Object
	for i := range 4 {
		ns := fmt.Sprintf("fleet-%02d", i) // every one in shard 2 of 4
		objs = append(objs,
			&vaultv1beta1.VaultApp{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}},
			&secretsv1beta1.KeycloakClientCredential{ObjectMeta: metav1.ObjectMeta{Name: "cred", Namespace: ns}})
	}
	c := cluster(t, objs...)
	var out bytes.Buffer
	if err := Shards(context.Background(), c, "4", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"VaultApps and credentials over 4 shards",
		"shard 0: 0 namespaces with objects, 0 VaultApps, 0 credentials (0.0% of the objects)",
		"shard 2: 4 namespaces with objects, 4 VaultApps, 4 credentials (100.0% of the objects)",
		"Uneven: shards 0, 1, 3 would have nothing to reconcile.",
		"Uneven: shard 2 would hold 100.0% of the objects against an even 25.0%",
		"Shard 0 also runs the cluster's jobs",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("shards 4 lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Shards(context.Background(), c, "1", &out); err != nil || strings.Contains(out.String(), "Uneven") || strings.Contains(out.String(), "cluster's jobs") {
		t.Errorf("shards 1: %v\n%s", err, out.String())
	}
	forbidden := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "vault.exemple.com", Resource: "vaultapps"}, "", errors.New("tenant"))
		},
	}).Build()
	if err := Shards(context.Background(), forbidden, "4", &out); err == nil || !strings.Contains(err.Error(), "it needs list on VaultApps cluster-wide") {
		t.Errorf("shards as a tenant: %v, want the permission named", err)
	}
	for _, bad := range []string{"0", "257", "four"} {
		if err := Shards(context.Background(), c, bad, &out); err == nil || !strings.Contains(err.Error(), "want a shard count from 1 to 256") {
			t.Errorf("shards %s: %v, want the rule", bad, err)
		}
	}
}
