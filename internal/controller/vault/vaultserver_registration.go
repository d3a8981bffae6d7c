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
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// Each check registers this cluster in the server's Vault
// (vaultclient.Registration): two clusters given one name (a copied
// VaultServer) find out at their first checks, not by losing policies, and
// clusters that keep their namespaces' secrets at the same KV paths are
// told. The marks carry the cluster's ID as well, so that neither adopts,
// repairs or sweeps what the other wrote meanwhile.

// registrar is the part of a server's client that registers this cluster.
type registrar interface {
	ReadRegistration(ctx context.Context, cluster string) (vaultclient.Registration, bool, error)
	WriteRegistration(ctx context.Context, r vaultclient.Registration) error
	DeleteRegistration(ctx context.Context, cluster string) error
	ListRegistrations(ctx context.Context) ([]string, error)
}

// claimFresh is how long another cluster's claim on this cluster's name
// counts: three checks. A cluster renamed since no longer renews it.
const claimFresh = 3 * ServerCheckInterval

// registrationsSeen is what a check read of the registrations in a Vault.
type registrationsSeen struct {
	// own is the registration under this cluster's name; nil when none.
	own *vaultclient.Registration
	// others are the registrations of other names.
	others []vaultclient.Registration
}

// verdict is a condition's status, reason and message.
type verdict struct {
	ok              bool
	reason, message string
}

// registrationOutcome is what a check decided of the registrations: what
// to write (nil: nothing), and the Registered and Isolated conditions
// (kv nil: not known).
type registrationOutcome struct {
	write      *vaultclient.Registration
	registered verdict
	kv         *verdict
	// contested are the policies this cluster holds that another
	// cluster's VaultApps ask for (contested.go); nil when the
	// registrations were not read (the status keeps what it said).
	contested *[]string
}

// wantedRegistration is this cluster's registration in a server's Vault:
// issuer is what its JWT app roles bind ("" for Kubernetes-auth roles).
func wantedRegistration(s *vaultv1beta1.VaultServer, id Identity, issuer string) vaultclient.Registration {
	r := vaultclient.Registration{Cluster: id.Cluster, ID: id.ID, KV: tenancy.KVOf(s)}
	if jwt := s.Spec.AppAuth.JWT; jwt != nil {
		r.JWTMount, r.JWTIssuer = strings.Trim(jwt.Mount, "/"), issuer
	}
	return r
}

// observeRegistrations reads the registration of this cluster's name and
// every other one in the Vault: a listing and a read each.
func observeRegistrations(ctx context.Context, reg registrar, cluster string) (registrationsSeen, error) {
	var seen registrationsSeen
	names, err := reg.ListRegistrations(ctx)
	if err != nil {
		return seen, err
	}
	if !slices.Contains(names, cluster) {
		names = append(names, cluster) // listed before it was written
	}
	for _, name := range names {
		r, found, err := reg.ReadRegistration(ctx, name)
		if err != nil && name != cluster && !vaultclient.Unavailable(err) && !vaultclient.PolicyRefused(err) {
			// Another name's policy that is no registration (written by
			// hand): not this check's to fail on.
			logf.FromContext(ctx).Info("a vko-cluster policy that is no registration, left out", "name", vaultclient.RegistrationName(name), "error", err.Error())
			continue
		}
		if err != nil {
			return seen, err
		}
		switch {
		case !found:
		case name == cluster:
			seen.own = &r
		default:
			seen.others = append(seen.others, r)
		}
	}
	return seen, nil
}

// decideRegistration decides what to write and report (pure). This
// cluster writes its registration when the name is free or its own (with
// its KV paths, fresh claims kept, stale ones dropped), and a claim into
// a namesake's: each side then says ClusterNameClash until one is renamed.
func decideRegistration(want vaultclient.Registration, seen registrationsSeen, now time.Time) registrationOutcome {
	out := registrationOutcome{kv: isolation(want, seen.others)}
	switch own := seen.own; {
	case own == nil:
		out.write = &want
		out.registered = verdict{true, vaultv1beta1.ReasonRegistered, fmt.Sprintf("cluster %s (id %s) is registered in this Vault (policy %s)", want.Cluster, want.ID, vaultclient.RegistrationName(want.Cluster))}
	case own.ID == want.ID:
		want.Claims = freshClaims(own.Claims, now)
		want.Wants = mergeWants(own.Wants, want.Wants, now)
		if vaultclient.RenderRegistration(want) != vaultclient.RenderRegistration(*own) {
			out.write = &want
		}
		out.registered = verdict{true, vaultv1beta1.ReasonRegistered, fmt.Sprintf("cluster %s (id %s) is registered in this Vault (policy %s)", want.Cluster, want.ID, vaultclient.RegistrationName(want.Cluster))}
		if len(want.Claims) > 0 {
			out.registered = verdict{false, vaultv1beta1.ReasonClusterNameClash, fmt.Sprintf(
				"another cluster runs under this cluster's name %s in this Vault (id %s): each leaves the other's policies alone, and neither adopts a VaultApp's policy the other wrote first; the cluster admin gives one of them another spec.cluster",
				want.Cluster, strings.Join(slices.Sorted(maps.Keys(want.Claims)), ", "))}
		}
	default:
		claimed := *own
		claimed.Claims = freshClaims(own.Claims, now)
		claimed.Claims[want.ID] = now
		out.write = &claimed
		out.registered = verdict{false, vaultv1beta1.ReasonClusterNameClash, fmt.Sprintf(
			"the name %s is registered in this Vault by another cluster (id %s; this one is %s): each leaves the other's policies alone, and neither adopts a VaultApp's policy the other wrote first; the cluster admin gives this VaultServer another spec.cluster, or, if that cluster is gone, deletes policy %s in Vault",
			want.Cluster, own.ID, want.ID, vaultclient.RegistrationName(want.Cluster))}
	}
	return out
}

// freshClaims are the claims made within claimFresh of now.
func freshClaims(claims map[string]time.Time, now time.Time) map[string]time.Time {
	fresh := map[string]time.Time{}
	for id, at := range claims {
		if now.Sub(at) < claimFresh {
			fresh[id] = at
		}
	}
	return fresh
}

// isolation is the Isolated condition: false when another cluster (another
// ID) keeps its namespaces' secrets at paths that overlap this cluster's
// in the same KV mount, or binds the same issuer on the same JWT mount.
func isolation(want vaultclient.Registration, others []vaultclient.Registration) *verdict {
	var kv, jwt []string
	for _, o := range others {
		if o.ID == want.ID {
			continue // this cluster, under a former name
		}
		if strings.Trim(o.KV.Mount, "/") == strings.Trim(want.KV.Mount, "/") && kvPathsOverlap(o.KV, want.KV) {
			kv = append(kv, o.Cluster)
		}
		if want.JWTMount != "" && o.JWTMount == want.JWTMount && o.JWTIssuer == want.JWTIssuer {
			jwt = append(jwt, o.Cluster)
		}
	}
	slices.Sort(kv)
	slices.Sort(jwt)
	switch {
	case len(kv) > 0:
		return &verdict{false, vaultv1beta1.ReasonKVShared, fmt.Sprintf(
			"cluster %s keeps its namespaces' secrets at paths of KV mount %s that overlap this cluster's (%s/data/%s/): a namespace of one cluster reads another's; the cluster admin gives each cluster's VaultServer spec.kvPath {cluster}/{namespace} (and templates secret/data/{cluster}/{namespace}/*), or a KV mount of its own",
			strings.Join(kv, ", "), want.KV.Mount, want.KV.Mount, want.KV.Prefix("<namespace>"))}
	case len(jwt) > 0:
		return &verdict{false, vaultv1beta1.ReasonIssuerShared, fmt.Sprintf(
			"cluster %s binds the same issuer %q on JWT mount %s: a ServiceAccount of the same namespace and name there logs in at this cluster's roles; the cluster admin gives each cluster a JWT mount of its own, or its own issuer (kube-apiserver --service-account-issuer)",
			strings.Join(jwt, ", "), want.JWTIssuer, want.JWTMount)}
	}
	return &verdict{true, vaultv1beta1.ReasonIsolated, fmt.Sprintf("no other cluster registered in this Vault shares this cluster's KV paths (%s/data/%s/) or its JWT issuer", want.KV.Mount, want.KV.Prefix("<namespace>"))}
}

// kvPathsOverlap reports whether some namespace's path of one layout is
// another's, or holds it: compared segment by segment, {namespace} stands
// for any one segment, and a path ends where its layout ends (namespace
// prod of {namespace} holds every namespace of prod/{namespace}).
func kvPathsOverlap(a, b vaultclient.KV) bool {
	as, bs := strings.Split(a.Prefix("{namespace}"), "/"), strings.Split(b.Prefix("{namespace}"), "/")
	for i := range min(len(as), len(bs)) {
		if as[i] != bs[i] && as[i] != "{namespace}" && bs[i] != "{namespace}" {
			return false
		}
	}
	return true
}

// register observes, decides and writes this cluster's registration in a
// server's Vault. A Vault policy that does not allow it is the admin's to
// fix, and said so.
func (r *VaultServerReconciler) register(ctx context.Context, s *vaultv1beta1.VaultServer, reg registrar, mine *appsOnServer) (registrationOutcome, error) {
	id := identityOn(s, r.ClusterUID)
	if former := s.Status.Cluster; former != "" && former != id.Cluster {
		// Renamed: the former name is freed (when it is this cluster's).
		formerID := id
		formerID.Cluster = former
		if err := unregister(ctx, reg, formerID); err != nil {
			return registrationOutcome{}, err
		}
	}
	issuer, _ := r.Clients.Bindings(s.Name) // as the login's client has it
	seen, err := observeRegistrations(ctx, reg, id.Cluster)
	var contested *[]string // known once the registrations were read
	if err == nil {
		now := time.Now()
		want := wantedRegistration(s, id, issuer)
		want.Wants = map[string]vaultclient.Wanted{s.Name: {At: now, Names: mine.wanted}}
		out := decideRegistration(want, seen, now)
		names := contestedPolicies(id.ID, mine.held, seen.others, now)
		contested, out.contested = &names, &names
		if out.write == nil {
			return out, nil
		}
		if err = reg.WriteRegistration(ctx, *out.write); err == nil {
			return out, nil
		}
	}
	if vaultclient.PolicyRefused(err) {
		return registrationOutcome{contested: contested, registered: verdict{false, vaultv1beta1.ReasonOperatorForbidden, fmt.Sprintf(
			"the operator's Vault policy does not let it list, read or write its registration %s: the Vault admin adds the vko-cluster.* paths of the admin setup to it (%v)",
			vaultclient.RegistrationName(id.Cluster), err)}}, nil
	}
	return registrationOutcome{}, err
}
