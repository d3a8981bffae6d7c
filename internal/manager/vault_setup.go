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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultcontroller "github.com/carbogame/vault-keycloak-operator/internal/controller/vault"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// The Vault side's wiring: the VaultServers, the environment's Vault (the
// implicit server of releases before VaultServer, while it is configured),
// and this cluster's identity in Vault.

// vaultDestinations is where VaultApps are written: the VaultServers, one
// client each (shared with the VaultServer controller: one login per
// server), and the environment's Vault when the operator has an address.
func vaultDestinations(mgr ctrl.Manager, opts Options, clusterUID string) (*vaultcontroller.ClusterDestinations, error) {
	tokens := &vaultcontroller.ServiceAccountTokens{Client: mgr.GetClient(), TokenPath: opts.Vault.ServiceAccountTokenPath}
	servers := &vaultcontroller.ClusterDestinations{
		Reader:     mgr.GetClient(),
		ClusterUID: clusterUID,
		Clients: &vaultcontroller.ServerClients{
			Reader:    mgr.GetAPIReader(),
			Namespace: opts.OperatorNamespace,
			Base:      opts.Vault,
			Tokens:    tokens,
			Issuer:    tokens.Issuer,
			Audience:  tokens.Audience,
		},
	}
	if opts.Vault.Address == "" {
		return servers, nil
	}
	c, err := vaultclient.New(opts.Vault)
	if err != nil {
		return nil, err
	}
	identity, err := clusterIdentity(clusterUID, opts.ClusterName, opts.VaultNamePrefix)
	if err != nil {
		return nil, err
	}
	ctrl.Log.WithName("setup").Info("identity in the environment's Vault", "cluster", identity.Cluster, "namePrefix", identity.NamePrefix)
	servers.Env = &vaultcontroller.Destination{Vault: c, Identity: identity, Where: envLocation(opts.Vault, identity)}
	return servers, nil
}

// envLocation is where the environment's Vault writes VaultApps: a
// VaultServer of the same Location takes them over as they are.
func envLocation(cfg vaultclient.Config, id vaultcontroller.Identity) vaultcontroller.Location {
	return vaultcontroller.Location{
		Address: cfg.Address, Namespace: cfg.Namespace, KVMount: cfg.KVMount,
		AppAuthMount: cfg.KubernetesAuthMount, AppAudience: cfg.AppRoleAudience,
		Cluster: id.Cluster, NamePrefix: id.NamePrefix,
	}
}

// kubeSystemUID is the kube-system namespace's UID: there from the
// cluster's creation to its end, and unique, it names the cluster in Vault
// when the admin gives no name.
func kubeSystemUID(reader client.Reader) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ns corev1.Namespace
	if err := reader.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, &ns); err != nil {
		return "", fmt.Errorf("read namespace %s, whose UID names this cluster in Vault: %w", metav1.NamespaceSystem, err)
	}
	return string(ns.UID), nil
}

// clusterIdentity is this cluster's identity in the Vault it shares with
// others: the admin's name for it, else the kube-system namespace's UID. A
// named cluster still owns what its UID marked before it was named.
func clusterIdentity(uid, name, prefix string) (vaultcontroller.Identity, error) {
	id := vaultcontroller.Identity{Cluster: uid, ID: uid, NamePrefix: prefix}
	if name != "" {
		id.Cluster, id.Aliases = name, []string{uid}
	}
	if err := id.Validate(); err != nil {
		return id, fmt.Errorf("this cluster's identity in Vault: %w", err)
	}
	return id, nil
}
