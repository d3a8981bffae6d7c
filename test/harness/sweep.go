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
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
)

// EnvSweepDir is where the tests of one run leave, as they go, what the
// secret sweep reads when the run is over: every secret value they handled,
// and everything the operator wrote for people to read. with-services sets
// it, and sweeps when its command ends (see Sweep). Unset, nothing is kept.
const EnvSweepDir = "VKO_SWEEP_DIR"

var (
	keepMu  sync.Mutex
	keepSeq atomic.Int64
)

// KeepSecret records secret values the tests handled (tokens, client
// secrets, passwords), for the sweep; empty ones are not secrets.
func KeepSecret(values ...string) {
	dir := os.Getenv(EnvSweepDir)
	if dir == "" {
		return
	}
	keepMu.Lock()
	defer keepMu.Unlock()
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "secrets", fmt.Sprintf("%d.hex", os.Getpid())), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	for _, v := range values {
		if v == "" {
			continue // a public client's secret, an unset token: nothing to hide
		}
		// Hex, one per line: a value may hold anything, a newline too.
		_, _ = fmt.Fprintln(f, hex.EncodeToString([]byte(v)))
	}
}

// KeepHaystack records text the operator wrote for people to read (a log,
// the Events and statuses of a cluster, a metrics page), for the sweep.
func KeepHaystack(name, text string) {
	dir := os.Getenv(EnvSweepDir)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(filepath.Join(dir, "haystacks"), 0o700); err != nil {
		return
	}
	safe := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(name, "_")
	file := fmt.Sprintf("%d-%04d-%s.txt", os.Getpid(), keepSeq.Add(1), safe[:min(len(safe), 80)])
	_ = os.WriteFile(filepath.Join(dir, "haystacks", file), []byte(name+"\n"+text), 0o600)
}

// KeepCluster records, from a cluster about to be stopped, the Events, the
// statuses and the metrics pages given (haystacks), and the secret values
// it holds for the operator: the client secret in every Secret a
// KeycloakClientCredential targets, and the secrets in every KeycloakServer's
// credentials Secret.
func KeepCluster(c client.Client, metricsURLs ...string) {
	if os.Getenv(EnvSweepDir) == "" || c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keepSecretsOf(ctx, c)
	hay, err := Haystacks(ctx, c, metricsURLs...)
	if err != nil {
		// A cluster whose CRDs are not installed (a test of the API
		// server alone) has no status to read; say so in the sweep.
		KeepHaystack("unreadable cluster", err.Error())
		return
	}
	for where, text := range hay {
		KeepHaystack(where, text)
	}
}

// SweepReport is what a sweep read and found.
type SweepReport struct {
	Secrets, Places int
	// Found says where a secret value was found, never the value.
	Found []string
}

// Sweep reads what the tests of a run kept under dir and looks for every
// secret value in every haystack. A run that kept no secret or no haystack
// proves nothing, and is an error.
func Sweep(dir string) (SweepReport, error) {
	var r SweepReport
	var secrets []string
	seen := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.hex"))
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return r, err
		}
		scanner := bufio.NewScanner(f)
		scanner.Buffer(make([]byte, 1<<20), 1<<20)
		for scanner.Scan() {
			v, err := hex.DecodeString(strings.TrimSpace(scanner.Text()))
			if err != nil {
				_ = f.Close()
				return r, fmt.Errorf("%s: %w", path, err)
			}
			if !seen[string(v)] {
				seen[string(v)] = true
				secrets = append(secrets, string(v))
			}
		}
		_ = f.Close()
	}
	hay := map[string]string{}
	files, _ = filepath.Glob(filepath.Join(dir, "haystacks", "*.txt"))
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return r, err
		}
		name, text, _ := strings.Cut(string(data), "\n")
		hay[filepath.Base(path)+" ("+name+")"] = text
	}
	r.Secrets, r.Places = len(secrets), len(hay)
	if len(secrets) == 0 || len(hay) == 0 {
		return r, fmt.Errorf("the run kept %d secret values and %d places under %s: a sweep of that proves nothing", len(secrets), len(hay), dir)
	}
	r.Found = FindSecrets(hay, secrets)
	return r, nil
}

// keepSecretsOf keeps the secret values a cluster holds for the operator.
func keepSecretsOf(ctx context.Context, c client.Client) {
	var kccs secretsv1beta1.KeycloakClientCredentialList
	var servers secretsv1beta1.KeycloakServerList
	var all corev1.SecretList
	if c.List(ctx, &kccs) != nil || c.List(ctx, &servers) != nil || c.List(ctx, &all) != nil {
		return
	}
	secretKeys := map[string][]string{} // Secret name → keys holding a secret
	for _, k := range kccs.Items {
		key := k.Spec.Target.Keys.ClientSecret
		if key == "" {
			key = "clientSecret"
		}
		secretKeys[k.Spec.Target.SecretName] = append(secretKeys[k.Spec.Target.SecretName], key)
	}
	for _, s := range servers.Items {
		name := s.Spec.CredentialsSecretRef.Name
		secretKeys[name] = append(secretKeys[name], "clientSecret", "password")
	}
	for _, s := range all.Items {
		for _, key := range secretKeys[s.Name] {
			if v := s.Data[key]; len(v) > 0 {
				KeepSecret(string(v))
			}
		}
	}
}
