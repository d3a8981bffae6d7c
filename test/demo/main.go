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

// Command demo shows the operator at work with no cluster of one's own
// (make demo): a local control plane, a real Vault and a real Keycloak, the
// manager with its webhooks, the samples of both groups in both versions,
// what the operator wrote, and both kinds of self-healing.
//
//	demo [--once] [--vault=vault|openbao]
//
// Without --once it stays up until Ctrl-C. Either way it stops everything it
// started. A Vault or Keycloak whose address is in the environment
// (VAULT_ADDR/VAULT_TOKEN, KEYCLOAK_URL/KEYCLOAK_ADMIN_USER/KEYCLOAK_ADMIN_PASSWORD)
// is used instead of starting one.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	once := flag.Bool("once", false, "exit after one pass instead of running until Ctrl-C")
	server := flag.String("vault", vaultServer, "the Vault server to run against: vault, or openbao")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, *once, *server); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
