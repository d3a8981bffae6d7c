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

// Command kubectl-vko is the kubectl plugin of the vault-keycloak-operator
// (kubectl vko): copy the binary anywhere on PATH. It reads the cluster as
// the user running it, with their kubeconfig; see internal/vkoctl.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/vkoctl"
)

const usage = `kubectl vko: ask the vault-keycloak-operator what it does and why.

  kubectl vko why KIND/NAME [-n NAMESPACE]   conditions, recent Events, and the grant that applies or the one missing
  kubectl vko grants NAMESPACE               what the namespace may ask of each VaultServer and KeycloakServer
  kubectl vko render FILE [-n NAMESPACE]     the Vault policy and role, or the target Secrets' shape, a VaultApp or
                                             credential in FILE would produce (nothing is created)
  kubectl vko refresh KIND/NAME [-n NAMESPACE]  read Vault or Keycloak now (vaultapp, kcc)
  kubectl vko rotate kcc/NAME [-n NAMESPACE]    regenerate the client secret now (where a grant says rotate)
  kubectl vko shards N                       how the cluster's VaultApps and credentials would split over N shards
                                             (--shards): the split follows a hash of the namespace names

KIND: vaultapp (va), kcc, vaultserver (vs), keycloakserver (ks).
Flags: -n/--namespace, --kubeconfig, --context.
`

// errHelp asks for the usage, which is not a failure.
var errHelp = errors.New("help")

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout)
	if errors.Is(err, errHelp) {
		fmt.Print(usage)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl vko:", err)
		os.Exit(1)
	}
}

// options are the kubectl flags the plugin honours.
type options struct {
	namespace, kubeconfig, context string
	args                           []string
}

func parse(args []string) (options, error) {
	var o options
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		var dst *string
		switch name {
		case "-n", "--namespace":
			dst = &o.namespace
		case "--kubeconfig":
			dst = &o.kubeconfig
		case "--context":
			dst = &o.context
		case "-h", "--help", "help":
			return o, errHelp
		default:
			o.args = append(o.args, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return o, fmt.Errorf("%s needs a value", name)
			}
			i++
			value = args[i]
		}
		*dst = value
	}
	return o, nil
}

func run(ctx context.Context, args []string, w io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if len(o.args) != 2 {
		return errors.New("want a command and its argument (kubectl vko --help)")
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
	namespace := o.namespace
	if namespace == "" {
		if namespace, _, err = cfg.Namespace(); err != nil {
			return err
		}
	}
	rest, err := cfg.ClientConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, vaultv1beta1.AddToScheme, secretsv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	c, err := client.New(rest, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	switch cmd, arg := o.args[0], o.args[1]; cmd {
	case "why":
		return vkoctl.Why(ctx, c, arg, namespace, time.Now(), w)
	case "grants":
		return vkoctl.Grants(ctx, c, arg, w)
	case "render":
		manifest, err := os.ReadFile(arg)
		if err != nil {
			return err
		}
		return vkoctl.Render(ctx, c, manifest, namespace, w)
	case "shards":
		return vkoctl.Shards(ctx, c, arg, w)
	case "refresh", "rotate":
		return vkoctl.Ask(ctx, c, vkoctl.Request(cmd), arg, namespace, vkoctl.RequestID(time.Now()), w)
	default:
		return fmt.Errorf("unknown command %q (kubectl vko --help)", cmd)
	}
}
