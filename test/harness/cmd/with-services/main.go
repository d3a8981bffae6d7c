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

// Command with-services starts the real services once, runs a command with
// their addresses in its environment, and stops them when it ends:
//
//	with-services [--control-plane] [--vault=false] [--keycloak=false] [--sweep] -- COMMAND [ARG...]
//
// It exports VAULT_ADDR and VAULT_TOKEN; KEYCLOAK_URL, KEYCLOAK_ADMIN_USER and
// KEYCLOAK_ADMIN_PASSWORD; and with --control-plane, KUBECONFIG. A service
// whose variables are already set is reused, not started. The exit code is
// the command's.
//
// With --sweep, the command's tests keep every secret value they handle and
// everything the operator wrote for people to read (logs, Events, statuses,
// metrics) under VKO_SWEEP_DIR; when the command ends, all of it is searched
// for every value, and a value found fails the run (see harness.Sweep).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func main() {
	os.Exit(run())
}

func run() int {
	withVault := flag.Bool("vault", true, "start (or reuse) a Vault dev server")
	withKeycloak := flag.Bool("keycloak", true, "start (or reuse) a Keycloak dev server")
	withControlPlane := flag.Bool("control-plane", false, "start a kube-apiserver and etcd with the CRDs installed, and export KUBECONFIG")
	crdDir := flag.String("crd-dir", filepath.Join(harness.RepoRoot(), "config", "crd", "bases"), "CRDs to install with --control-plane")
	sweep := flag.Bool("sweep", false, "when the command ends, search what its tests kept for every secret value they handled")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: with-services [flags] -- COMMAND [ARG...]")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logDir, err := os.MkdirTemp("", "vko-services-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	say := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "with-services: "+format+"\n", a...) }
	say("service logs in %s", logDir)

	var env []string
	var stops []func()
	sweepDir := filepath.Join(logDir, "sweep")
	if *sweep {
		env = append(env, harness.EnvSweepDir+"="+sweepDir)
	}
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()

	// Vault and Keycloak start side by side: Keycloak takes about a minute.
	var vault *harness.Vault
	var keycloak *harness.Keycloak
	g, gctx := errgroup.WithContext(ctx)
	if *withVault {
		if v, err := harness.VaultFromEnv(); err == nil {
			say("reusing Vault at %s", v.Addr)
		} else {
			g.Go(func() (err error) {
				vault, err = harness.StartVault(gctx, logDir)
				return err
			})
		}
	}
	if *withKeycloak {
		if k, err := harness.KeycloakFromEnv(); err == nil {
			say("reusing Keycloak at %s", k.URL)
		} else {
			g.Go(func() (err error) {
				keycloak, err = harness.StartKeycloak(gctx, logDir)
				return err
			})
		}
	}
	err = g.Wait()
	if *sweep {
		if err := os.Setenv(harness.EnvSweepDir, sweepDir); err != nil {
			say("%v", err)
			return 1
		}
		if vault != nil {
			harness.KeepSecret(vault.Token)
		}
		if keycloak != nil {
			harness.KeepSecret(keycloak.Password)
		}
	}
	if vault != nil {
		stops = append(stops, vault.Stop)
		env = append(env, vault.Env()...)
		say("Vault dev server at %s", vault.Addr)
	}
	if keycloak != nil {
		stops = append(stops, keycloak.Stop)
		env = append(env, keycloak.Env()...)
		say("Keycloak dev server at %s", keycloak.URL)
	}
	if err != nil {
		say("%v", err)
		return 1
	}
	if *withControlPlane {
		cp, err := harness.StartControlPlane(*crdDir, logDir)
		if err != nil {
			say("%v", err)
			return 1
		}
		stops = append(stops, cp.Stop)
		env = append(env, "KUBECONFIG="+cp.Kubeconfig)
		say("kube-apiserver at %s (KUBECONFIG=%s)", cp.Config.Host, cp.Kubeconfig)
	}

	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		say("%v", err)
		return 1
	}
	// Ctrl-C reaches the command through the terminal; a SIGTERM sent to this
	// process alone is passed on, so that the services stop only after it.
	go func() {
		<-ctx.Done()
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}()
	err = cmd.Wait()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		say("%v", err)
		code = 1
	}
	if *sweep && code == 0 {
		code = sweepFor(sweepDir, say)
	}
	return code
}

// sweepFor searches what the tests kept for every secret value they handled
// (harness.Sweep) and says what it found; 1 when anything was.
func sweepFor(dir string, say func(string, ...any)) int {
	report, err := harness.Sweep(dir)
	switch {
	case err != nil:
		say("secret sweep: %v", err)
		return 1
	case len(report.Found) > 0:
		say("secret sweep: %d secret value(s) found in what the operator wrote:", len(report.Found))
		for _, f := range report.Found {
			say("  %s", f)
		}
		return 1
	}
	say("secret sweep: none of %d secret values in %d places the operator wrote (logs, Events, statuses, metrics)", report.Secrets, report.Places)
	return 0
}
