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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
)

// Haystacks gathers what a user or an attacker may read of the operator
// without reading a Secret: every Event, the status of every resource of
// both groups, and the text of each metrics endpoint given; the logs are
// added by the caller. Each is keyed by where it came from.
func Haystacks(ctx context.Context, c client.Client, metricsURLs ...string) (map[string]string, error) {
	out := map[string]string{}
	var events eventsv1.EventList
	if err := c.List(ctx, &events); err != nil {
		return nil, fmt.Errorf("list Events: %w", err)
	}
	for _, e := range events.Items {
		out["event "+e.Namespace+"/"+e.Name] = strings.Join([]string{e.Reason, e.Note, e.Action}, " ")
	}
	for _, list := range []client.ObjectList{
		&vaultv1beta1.VaultAppList{}, &secretsv1beta1.KeycloakClientCredentialList{}, &secretsv1beta1.KeycloakServerList{},
	} {
		kind := fmt.Sprintf("%T", list)
		if err := c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list %s: %w", kind, err)
		}
		data, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		out["every "+kind] = string(data)
	}
	for _, url := range metricsURLs {
		resp, err := http.Get(url)
		if err != nil {
			return nil, fmt.Errorf("scrape %s: %w", url, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		out["metrics "+url] = string(body)
	}
	return out, nil
}

// FindSecrets returns, for each secret value found in a haystack, where it
// was found (never the value: the answer goes into a test's output). An
// empty secret is reported too: it would match everything and prove nothing.
//
// A run's sweep looks for hundreds of values in hundreds of megabytes, so
// each haystack is read once: every window of the first few bytes of a
// value is looked up in a map, and only a hit is compared in full.
func FindSecrets(haystacks map[string]string, secrets []string) []string {
	const k = 8
	var found []string
	byPrefix := map[string][]int{}
	var short []int
	for i, s := range secrets {
		switch {
		case s == "":
			found = append(found, fmt.Sprintf("secret #%d is empty: nothing to look for", i))
		case len(s) < k:
			short = append(short, i)
		default:
			byPrefix[s[:k]] = append(byPrefix[s[:k]], i)
		}
	}
	wheres := make([]string, 0, len(haystacks))
	for where := range haystacks {
		wheres = append(wheres, where)
	}
	slices.Sort(wheres)
	for _, where := range wheres {
		text := haystacks[where]
		hit := map[int]bool{}
		for _, i := range short {
			if strings.Contains(text, secrets[i]) {
				hit[i] = true
			}
		}
		for at := 0; at+k <= len(text); at++ {
			for _, i := range byPrefix[text[at:at+k]] {
				if strings.HasPrefix(text[at:], secrets[i]) {
					hit[i] = true
				}
			}
		}
		for i := range secrets {
			if hit[i] {
				found = append(found, fmt.Sprintf("secret #%d (%d characters) in %s", i, len(secrets[i]), where))
			}
		}
	}
	return found
}
