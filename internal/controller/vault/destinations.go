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
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/tenancy"
)

// Destination is a Vault that VaultApps' policies and roles are written to,
// with this cluster's identity there.
type Destination struct {
	// Name is the VaultServer's; "" for the Vault of the operator's
	// environment (VAULT_ADDR and the flags).
	Name     string
	Vault    VaultAPI
	Identity Identity
	// Spec is the VaultServer; nil for the environment's Vault, which
	// every namespace may use.
	Spec *vaultv1beta1.VaultServer
	// Where is the Vault, the mounts and the names it writes to.
	Where Location
	// HeldBack, on the environment's Vault, says why a VaultApp stays
	// there rather than move to the VaultServer of the same Location.
	HeldBack string
	// Unknown, for a VaultServer the VaultApp names and never recorded
	// writing to, which grants its namespace nothing: the answer it gets,
	// the one of a missing server (onUnknownServer).
	Unknown string
}

// outageKey names the server in the Outage: each is probed on its own, so
// one Vault that does not answer holds only its own VaultApps.
func (s *Destination) outageKey() string { return "vault/" + s.Name }

// Destinations finds the Vault of each VaultApp.
type Destinations interface {
	// Resolve returns the server of a VaultApp, or an *errNoDestination that
	// says why it has none.
	Resolve(ctx context.Context, app *vaultv1beta1.VaultApp) (*Destination, error)
	// All returns every server the operator can reach now, for the
	// sweep, and what kept others out.
	All(ctx context.Context) ([]*Destination, error)
}

// errNoDestination is a VaultApp without a usable server: a condition reason and
// a message, not a failure to retry with backoff (a VaultServer or the
// annotation that makes one the default will be watched for).
type errNoDestination struct{ reason, msg string }

func (e *errNoDestination) Error() string { return e.msg }

// chooseServer decides which server a VaultApp uses: the one it names; the
// one it wrote to before (a VaultApp never moves by itself: a new default
// server takes only new VaultApps); else the default VaultServer; else the
// environment's Vault. A VaultApp written to the environment's Vault
// (releases before VaultServer) moves to a VaultServer of the same
// Location (twins), where its policy and role already are, as they are:
// the one it names, else the only twin, else the default among them.
func chooseServer(app *vaultv1beta1.VaultApp, envConfigured bool, defaults, twins []string) (string, *errNoDestination) {
	wroteToEnv := app.Status.Server == "" && app.Status.WroteToVault()
	var name string
	switch {
	case !app.DeletionTimestamp.IsZero() && app.Status.Server != "":
		// Deleted: cleaned where it wrote, whatever the spec says now.
		return app.Status.Server, nil
	case !app.DeletionTimestamp.IsZero() && wroteToEnv && envConfigured:
		return "", nil
	case app.Spec.ServerRef != nil:
		name = app.Spec.ServerRef.Name
	case app.Status.Server != "":
		name = app.Status.Server
	case wroteToEnv && pickTwin(twins, defaults) != "":
		return pickTwin(twins, defaults), nil
	case wroteToEnv && envConfigured:
		return "", nil
	case len(defaults) == 1:
		name = defaults[0]
	case len(defaults) > 1:
		return "", &errNoDestination{vaultv1beta1.ReasonDefaultServerAmbiguous, fmt.Sprintf("VaultServers %v are all annotated %s=true: the cluster admin must keep one", defaults, vaultv1beta1.DefaultServerAnnotation)}
	case envConfigured:
		return "", nil
	default:
		return "", &errNoDestination{vaultv1beta1.ReasonVaultNotConfigured, "no VaultServer is named in spec.serverRef or annotated " + vaultv1beta1.DefaultServerAnnotation + "=true, and the operator runs without a Vault address"}
	}
	if wroteToEnv && slices.Contains(twins, name) {
		return name, nil
	}
	if app.Status.Server != name && (app.Status.Server != "" || wroteToEnv) {
		from := "VaultServer " + app.Status.Server
		if app.Status.Server == "" {
			from = "the operator's environment (VAULT_ADDR), which no VaultServer of the same address, namespace, cluster, namePrefix, kvMount and appAuth matches"
		}
		return "", &errNoDestination{vaultv1beta1.ReasonServerChanged, fmt.Sprintf("the policy and role were written to the Vault of %s, not VaultServer %s: a VaultApp does not move between servers; delete it and create it again", from, name)}
	}
	return name, nil
}

// pickTwin is the twin a VaultApp on the environment's Vault moves to when
// it names no server: the only one, else the default among them; "" when
// there is none, or no way to choose.
func pickTwin(twins, defaults []string) string {
	switch {
	case len(twins) == 1:
		return twins[0]
	case len(defaults) == 1 && slices.Contains(twins, defaults[0]):
		return defaults[0]
	}
	return ""
}

// ClusterDestinations resolves VaultApps to the VaultServers of the cluster, or
// to the environment's Vault.
type ClusterDestinations struct {
	// Reader reads VaultServers (the manager's cache).
	Reader client.Reader
	// Env is the environment's Vault; nil when the operator has none.
	Env *Destination
	// Clients keeps one client per VaultServer (shared with the
	// VaultServer controller: one login per server).
	Clients *ServerClients
	// ClusterUID names the cluster in a server that names none.
	ClusterUID string
}

// Resolve returns the server of a VaultApp.
func (v *ClusterDestinations) Resolve(ctx context.Context, app *vaultv1beta1.VaultApp) (*Destination, error) {
	// The default server matters only to a VaultApp that names none and
	// records none: no listing for the others.
	var defaults, twins []string
	if app.Status.Server == "" {
		var err error
		if defaults, twins, err = v.candidates(ctx, app); err != nil {
			return nil, err
		}
	}
	name, refused := chooseServer(app, v.Env != nil, defaults, twins)
	switch {
	case refused != nil:
		return nil, refused
	case name == "":
		return v.Env, nil
	}
	var s vaultv1beta1.VaultServer
	err := v.Reader.Get(ctx, client.ObjectKey{Name: name}, &s)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read VaultServer %s: %w", name, err)
	}
	// A server the tenant named and never wrote to answers the same
	// whether it is missing, going or grants her nothing. The grant is
	// checked again, in full, before each write.
	unknown := app.Spec.ServerRef != nil && !app.Status.WroteToVault()
	asMissing := tenancy.UnknownVaultServer(name, app.Namespace)
	if unknown && (err != nil || !s.DeletionTimestamp.IsZero()) {
		return nil, &errNoDestination{vaultv1beta1.ReasonServerNotFound, asMissing}
	}
	if unknown && !tenancy.VaultServerGrantsNamespace(&s, app.Namespace) {
		return v.unknownServer(ctx, &s, asMissing)
	}
	if err != nil {
		return nil, &errNoDestination{vaultv1beta1.ReasonServerNotFound, fmt.Sprintf("VaultServer %s does not exist", name)}
	}
	if !s.DeletionTimestamp.IsZero() {
		// Nothing more is written there: its cleanup may be under way.
		return nil, &errNoDestination{vaultv1beta1.ReasonServerNotFound, fmt.Sprintf("VaultServer %s is being deleted", name)}
	}
	if app.Status.Server == "" && app.Status.WroteToVault() && v.Env != nil {
		// A move from the environment's Vault to its twin: only when the
		// twin grants all the VaultApp asks, so that nothing live shrinks.
		if held, err := v.holdOnEnv(ctx, app, &s); err != nil || held != "" {
			if err != nil {
				return nil, err
			}
			env := *v.Env
			env.HeldBack = held
			return &env, nil
		}
	}
	return v.serverOf(ctx, &s)
}

// All returns the environment's Vault and every VaultServer whose client
// can be built.
func (v *ClusterDestinations) All(ctx context.Context) ([]*Destination, error) {
	var out []*Destination
	if v.Env != nil {
		out = append(out, v.Env)
	}
	var list vaultv1beta1.VaultServerList
	if err := v.Reader.List(ctx, &list); err != nil {
		return out, fmt.Errorf("list VaultServers: %w", err)
	}
	var errs error
	for i := range list.Items {
		s, err := v.serverOf(ctx, &list.Items[i])
		if err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

func (v *ClusterDestinations) serverOf(ctx context.Context, s *vaultv1beta1.VaultServer) (*Destination, error) {
	vc, err := v.Clients.For(ctx, s)
	var ca *errCA
	switch {
	case errors.As(err, &ca):
		return nil, &errNoDestination{vaultv1beta1.ReasonCAInvalid, fmt.Sprintf("VaultServer %s: %v", s.Name, err)}
	case err != nil:
		return nil, fmt.Errorf("client of VaultServer %s: %w", s.Name, err)
	}
	where := LocationOf(s, v.ClusterUID)
	_, where.KubernetesAudience = v.Clients.Bindings(s.Name)
	return &Destination{Name: s.Name, Vault: vc, Identity: identityOn(s, v.ClusterUID), Spec: s.DeepCopy(), Where: where}, nil
}

// identityOn is this cluster's identity in a VaultServer's Vault: its
// cluster name, else the kube-system UID (kept as an alias when named).
func identityOn(s *vaultv1beta1.VaultServer, clusterUID string) Identity {
	id := Identity{Cluster: clusterUID, ID: clusterUID, NamePrefix: s.Spec.NamePrefix, Predecessors: predecessorsOf(s)}
	if s.Spec.Cluster != "" {
		id.Cluster, id.Aliases = s.Spec.Cluster, []string{clusterUID}
	}
	return id
}

// candidates are what a VaultApp with no server recorded may be given:
// the VaultServers annotated as the default (when it names none), and,
// when it wrote to the environment's Vault, the VaultServers of the same
// Location (its twins).
func (v *ClusterDestinations) candidates(ctx context.Context, app *vaultv1beta1.VaultApp) (defaults, twins []string, err error) {
	legacy := app.Status.WroteToVault() && v.Env != nil
	if app.Spec.ServerRef != nil && !legacy {
		return nil, nil, nil
	}
	var list vaultv1beta1.VaultServerList
	if err := v.Reader.List(ctx, &list); err != nil {
		return nil, nil, fmt.Errorf("list VaultServers: %w", err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		if s.Annotations[vaultv1beta1.DefaultServerAnnotation] == "true" {
			defaults = append(defaults, s.Name)
		}
		if legacy && s.DeletionTimestamp.IsZero() && LocationOf(s, v.ClusterUID).Same(v.Env.Where) {
			twins = append(twins, s.Name)
		}
	}
	slices.Sort(defaults)
	slices.Sort(twins)
	return defaults, twins, nil
}

// predecessorsOf are the cluster IDs the admin names in the VaultServer's
// PredecessorsAnnotation (comma-separated kube-system UIDs).
func predecessorsOf(s *vaultv1beta1.VaultServer) []string {
	var out []string
	for _, id := range strings.Split(s.Annotations[vaultv1beta1.PredecessorsAnnotation], ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}
