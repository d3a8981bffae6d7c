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

package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// steadyState is P2's figures: one refresh period from a manager's start,
// with the fleet already in step.
type steadyState struct {
	Window         time.Duration  `json:"windowNanos"`
	Vault          map[string]int `json:"vault"`
	Keycloak       map[string]int `json:"keycloak"`
	APIWrites      map[string]int `json:"apiWrites"`
	APIReads       int            `json:"apiReads"`
	VaultReadsPer  float64        `json:"vaultReadsPerVaultApp"`
	KeycloakReadsP float64        `json:"keycloakReadsPerCredential"`
}

// restartInStep restarts the manager with the fleet in step, and counts
// every request it makes during one refresh period from its start.
func (f *fleet) restartInStep(b *testing.B) steadyState {
	b.Helper()
	f.stopManager() // hands the lease back
	vBefore, kBefore := f.vaultCounts(), f.keycloakProxy.Counts()
	f.auditSince(b)
	start := time.Now()
	f.startManager(b, defaultWorkers)
	f.processStart = start
	f.processVault, f.processKeycloak = vBefore, kBefore
	time.Sleep(time.Until(start.Add(shape.Refresh)))
	st := steadyState{
		Window:   shape.Refresh,
		Vault:    harness.Difference(f.vaultCounts(), vBefore),
		Keycloak: harness.Difference(f.keycloakProxy.Counts(), kBefore),
	}
	api := f.managerAPI(b)
	st.APIReads, st.APIWrites = api.Reads, api.Writes
	st.VaultReadsPer = float64(st.Vault["read"]) / float64(shape.Size)
	st.KeycloakReadsP = float64(st.Keycloak["read"]) / float64(shape.Size)
	b.Logf("P2 one period (%s) from a restart: Vault %v, Keycloak %v, API writes %v (%v), API reads %d", shape.Refresh, st.Vault, st.Keycloak, st.APIWrites, api.Examples, st.APIReads)
	return st
}

// auditSince returns the manager's requests in the audit log since the
// last call.
func (f *fleet) auditSince(b *testing.B) []harness.AuditEvent {
	b.Helper()
	events, offset, err := f.cluster.AuditEventsBy(f.auditOffset, harness.ManagerUser)
	if err != nil {
		b.Fatal(err)
	}
	f.auditOffset = offset
	return events
}

// managerAPI counts the manager's API-server requests since the last
// reading: reads, and writes by "verb resource/subresource" (an Event's
// reason after it, "refused 409" after a write the API server refused)
// with a few of the objects each wrote, to tell which they were. Leader election is left
// out (its Lease, and the Event that says who leads): it is not per object.
func (f *fleet) managerAPI(b *testing.B) apiRequests {
	b.Helper()
	return f.managerAPIFrom(b, time.Time{})
}

// managerAPIFrom is managerAPI over the requests the API server received
// from since on: those of a manager stopped before since whose answers
// came later (an Event create timed out after a minute) are not counted.
func (f *fleet) managerAPIFrom(b *testing.B, since time.Time) apiRequests {
	b.Helper()
	r := apiRequests{Writes: map[string]int{}, Examples: map[string][]string{}}
	for _, e := range f.auditSince(b) {
		switch {
		case e.RequestReceived.Before(since):
		case e.ObjectRef.Resource == "leases":
		case !e.Write():
			r.Reads++
		case e.ObjectRef.Resource == "events" && e.ObjectRef.Namespace == operatorNamespace && strings.HasPrefix(e.ObjectRef.Name, harness.LeaderLeaseName):
		default:
			key := fmt.Sprintf("%s %s/%s", e.Verb, e.ObjectRef.Resource, e.ObjectRef.Subresource)
			if e.RequestObject != nil && e.RequestObject.Reason != "" {
				key += " " + e.RequestObject.Reason // an Event's
			}
			if e.ResponseStatus.Code >= 400 {
				key += fmt.Sprintf(" refused %d", e.ResponseStatus.Code)
				r.Refused++
			}
			r.Writes[key]++
			if len(r.Examples[key]) < writeExamples {
				r.Examples[key] = append(r.Examples[key], e.ObjectRef.Namespace+"/"+e.ObjectRef.Name)
			}
		}
	}
	return r
}

// writeExamples is how many objects managerAPI names per kind of write.
const writeExamples = 3

// apiRequests is the manager's API-server requests over a window.
type apiRequests struct {
	Reads    int                 `json:"reads"`
	Writes   map[string]int      `json:"writes"`
	Examples map[string][]string `json:"writeExamples"`
	// Refused is how many of the writes the API server refused (a 409:
	// a write from a stale view).
	Refused int `json:"refused"`
}

// total is the sum of counts.
func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// logins is P3's figures for the manager started in restartInStep.
type logins struct {
	Lifetime          time.Duration `json:"processLifetimeNanos"`
	KeycloakTokens    int           `json:"keycloakTokenRequests"`
	KeycloakTokenTTL  time.Duration `json:"keycloakTokenLifetimeNanos"`
	KeycloakAllowed   int           `json:"keycloakTokenRequestsAllowed"`
	VaultLogins       int           `json:"vaultLogins"`
	VaultAllowed      int           `json:"vaultLoginsAllowed"`
	Refused           int           `json:"vaultRequestsRefused403"`
	LoginsWhenRefused int           `json:"vaultLoginsWhileRefused"`
	RecoveredAfter    time.Duration `json:"recoveredAfterNanos"`
}

// misconfiguredPolicy takes the operator's right to write policies away
// for a while (an admin's mistake on the app.* paths; the token's own
// paths stay, as in the README's policy): new VaultApps are refused with
// 403 on every retry, and that must not cost a login. Then the policy is
// put back and they converge. (A policy without auth/token/lookup-self
// costs one login in all, to tell it from a token Vault refuses: the Vault
// client's unit tests count that.)
func (f *fleet) misconfiguredPolicy(b *testing.B) (refused, loginsWhileRefused int, recovered time.Duration) {
	b.Helper()
	ctx := context.Background()
	admin, err := f.vault.AdminClient()
	if err != nil {
		b.Fatal(err)
	}
	broken := `path "sys/policies/acl" { capabilities = ["list"] }
path "sys/policies/acl/app.*" { capabilities = ["read"] }
path "auth/token/lookup-self" { capabilities = ["read"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/kubernetes/role" { capabilities = ["list"] }
path "auth/kubernetes/role/app.*" { capabilities = ["read"] }
`
	if err := admin.Sys().PutPolicyWithContext(ctx, "vault-keycloak-operator", broken); err != nil {
		b.Fatal(err)
	}
	before, statuses := f.vaultCounts(), f.vaultStatuses(403)
	const n = 20
	parallel(b, n, 4, func(i int) error { return f.c.Create(ctx, vaultApp("refused", i)) })
	time.Sleep(20 * time.Second)
	refused = f.vaultStatuses(403) - statuses
	loginsWhileRefused = harness.Difference(f.vaultCounts(), before)["login"]
	if err := admin.Sys().PutPolicyWithContext(ctx, "vault-keycloak-operator", harness.OperatorVaultPolicy); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := range n {
		app := vaultApp("refused", i)
		for {
			if err := f.c.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
				b.Fatal(err)
			}
			if harness.ReadyFor(app.Status.Conditions, app.Generation) {
				break
			}
			if time.Since(start) > 3*time.Minute {
				b.Fatalf("VaultApp %s not Ready 3 minutes after the policy was put back: %v", app.Name, app.Status.Conditions)
			}
			time.Sleep(time.Second)
		}
	}
	recovered = time.Since(start)
	f.deleteRun(b, "refused")
	b.Logf("P3 a read-only operator policy for 20 s: %d requests refused, %d logins meanwhile; all Ready %s after it was fixed", refused, loginsWhileRefused, recovered.Round(time.Second))
	return refused, loginsWhileRefused, recovered
}

// loginCounts are the token requests and Vault logins of the manager
// started in restartInStep, over its life so far.
func (f *fleet) loginCounts(b *testing.B, tokenTTL time.Duration) logins {
	life := time.Since(f.processStart)
	l := logins{
		Lifetime:         life,
		KeycloakTokens:   harness.Difference(f.keycloakProxy.Counts(), f.processKeycloak)["token"],
		KeycloakTokenTTL: tokenTTL,
		// One at start, then at most one per token lifetime begun.
		KeycloakAllowed: 1 + int(math.Ceil(life.Seconds()/tokenTTL.Seconds())),
		VaultLogins:     harness.Difference(f.vaultCounts(), f.processVault)["login"],
		// The operator's Vault token lives an hour (AllowOperator's role),
		// one per VaultServer.
		VaultAllowed: vaultServers * (1 + int(life/time.Hour)),
	}
	return l
}

// keycloakTokenLifetime is how long the master realm's access tokens live
// (the operator logs in there).
func (f *fleet) keycloakTokenLifetime(b *testing.B) time.Duration {
	b.Helper()
	kc, err := f.keycloak.Admin(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	realm, err := kc.GC.GetRealm(context.Background(), kc.Token, "master")
	if err != nil || realm.AccessTokenLifespan == nil {
		b.Fatalf("master realm's token lifespan: %v", err)
	}
	return time.Duration(*realm.AccessTokenLifespan) * time.Second
}

// crossCheck compares the proxies' counts for the current manager with the
// manager's own request metrics, at a moment when no request is in flight
// (the same figures before and after reading the proxies).
func (f *fleet) crossCheck(b *testing.B) (bool, string) {
	b.Helper()
	detail := ""
	for range 80 {
		m1, err := f.manager.Metrics()
		if err != nil {
			b.Fatal(err)
		}
		vault := harness.Difference(f.vaultCounts(), f.processVault)
		keycloak := harness.Difference(f.keycloakProxy.Counts(), f.processKeycloak)
		m2, err := f.manager.Metrics()
		if err != nil {
			b.Fatal(err)
		}
		mv, mk := harness.Sum(m1, "vko_vault_requests_total", nil), harness.Sum(m1, "vko_keycloak_requests_total", nil)
		pv, pk := 0, 0
		for _, n := range vault {
			pv += n
		}
		for _, n := range keycloak {
			pk += n
		}
		detail = fmt.Sprintf("Vault %d proxied / %.0f counted, Keycloak %d / %.0f", pv, mv, pk, mk)
		if mv == harness.Sum(m2, "vko_vault_requests_total", nil) && mk == harness.Sum(m2, "vko_keycloak_requests_total", nil) &&
			int(mv) == pv && int(mk) == pk {
			return true, detail
		}
		time.Sleep(250 * time.Millisecond)
	}
	return false, detail
}
