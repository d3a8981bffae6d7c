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

package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Environment variables that carry a running Keycloak to the tests.
const (
	EnvKeycloakURL      = "KEYCLOAK_URL"
	EnvKeycloakUser     = "KEYCLOAK_ADMIN_USER"
	EnvKeycloakPassword = "KEYCLOAK_ADMIN_PASSWORD"
	// EnvKeycloakHome is the unpacked keycloak-quarkus-dist that hack/ensure.sh fetched.
	EnvKeycloakHome = "VKO_KEYCLOAK_HOME"
)

// Keycloak is a real Keycloak server in dev mode with an in-memory database
// and a bootstrap admin in the master realm.
type Keycloak struct {
	URL      string
	User     string
	Password string

	home, logDir       string
	httpPort, mgmtPort int
	proc               *Process
}

// StartKeycloak starts "kc.sh start-dev" on free loopback ports and waits
// until the master realm answers (about a minute on two cores).
func StartKeycloak(ctx context.Context, logDir string) (*Keycloak, error) {
	home := os.Getenv(EnvKeycloakHome)
	if err := requireFile(home, "keycloak", EnvKeycloakHome); err != nil {
		return nil, err
	}
	k := &Keycloak{User: "admin", Password: "admin-password-for-tests", home: home, logDir: logDir}
	err := retryWhilePortTaken(func() (*Process, error) {
		ports, err := FreePorts(2)
		if err != nil {
			return nil, err
		}
		k.httpPort, k.mgmtPort = ports[0], ports[1]
		k.URL = "http://127.0.0.1:" + strconv.Itoa(k.httpPort)
		k.proc, err = k.start(ctx)
		return k.proc, err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keycloak) start(ctx context.Context) (*Process, error) {
	proc, err := start("keycloak", k.logDir,
		[]string{"KC_BOOTSTRAP_ADMIN_USERNAME=" + k.User, "KC_BOOTSTRAP_ADMIN_PASSWORD=" + k.Password},
		filepath.Join(k.home, "bin", "kc.sh"),
		"start-dev",
		"--http-host=127.0.0.1",
		"--http-port="+strconv.Itoa(k.httpPort),
		"--http-management-port="+strconv.Itoa(k.mgmtPort),
		// In memory: nothing is written into the shared cache, and two
		// instances (the shared one and a test's own) never share a database.
		"--db=dev-mem",
		// Rotation with a grace period (a preview feature, off by
		// default): what the README asks of a production Keycloak too.
		"--features=client-secret-rotation")
	if err != nil {
		return nil, err
	}
	// 200, not merely an answer: Keycloak serves 404 on /realms/master for
	// a moment after it listens, until the master realm and its admin are
	// made (a test that logged in then got 404 on a loaded machine).
	if err := proc.waitHTTPStatus(ctx, k.URL+"/realms/master", 5*time.Minute, func(code int) bool { return code == http.StatusOK }); err != nil {
		proc.Stop()
		return proc, err
	}
	return proc, nil
}

// Stop ends the server; its in-memory realms are gone.
func (k *Keycloak) Stop() { k.proc.Stop() }

// Env is what a child process needs to reach this Keycloak.
func (k *Keycloak) Env() []string {
	return []string{EnvKeycloakURL + "=" + k.URL, EnvKeycloakUser + "=" + k.User, EnvKeycloakPassword + "=" + k.Password}
}

// KeycloakFromEnv returns the Keycloak that make test (or the caller) started.
func KeycloakFromEnv() (*Keycloak, error) {
	k := &Keycloak{URL: os.Getenv(EnvKeycloakURL), User: os.Getenv(EnvKeycloakUser), Password: os.Getenv(EnvKeycloakPassword)}
	if k.URL == "" || k.User == "" || k.Password == "" {
		return nil, fmt.Errorf("no Keycloak to test against: %s, %s and %s are %w; run 'make test', which starts a real Keycloak dev server", EnvKeycloakURL, EnvKeycloakUser, EnvKeycloakPassword, errNotConfigured)
	}
	return k, nil
}

// Restart starts a new dev server on the same address after Stop. Like
// every dev server with an in-memory database, it starts empty.
func (k *Keycloak) Restart(ctx context.Context) error {
	if k.home == "" {
		return fmt.Errorf("keycloak at %s was not started by this harness", k.URL)
	}
	var err error
	k.proc, err = k.start(ctx)
	return err
}
