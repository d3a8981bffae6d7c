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

package vaultclient

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/carbogame/vault-keycloak-operator/internal/counter"
)

// requestsTotal counts every request the operator sends to Vault. A
// steady-state resync shows up here as reads only.
var requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vko_vault_requests_total",
	Help: "Requests sent to Vault, by operation (login, renew, lookup_self, read_policy, write_policy, delete_policy, list_policies, read_role, write_role, delete_role, list_roles, health, read_registration, write_registration, delete_registration, list_registrations) and outcome (success, not_found, error).",
}, []string{"operation", "outcome"})

func init() {
	metrics.Registry.MustRegister(requestsTotal)
}

// Operation names, as they appear in the operation label.
const (
	OpLogin        = "login"
	OpRenew        = "renew"
	OpLookupSelf   = "lookup_self"
	OpReadPolicy   = "read_policy"
	OpWritePolicy  = "write_policy"
	OpDeletePolicy = "delete_policy"
	OpReadRole     = "read_role"
	OpWriteRole    = "write_role"
	OpDeleteRole   = "delete_role"
	OpListPolicies = "list_policies"
	OpListRoles    = "list_roles"
	OpHealth       = "health"
	// A cluster's registration (cluster_registration.go).
	OpReadRegistration   = "read_registration"
	OpWriteRegistration  = "write_registration"
	OpDeleteRegistration = "delete_registration"
	OpListRegistrations  = "list_registrations"
)

func observe(op string, err error, found bool) {
	outcome := "success"
	switch {
	case err != nil:
		outcome = "error"
	case !found:
		outcome = "not_found"
	}
	requestsTotal.WithLabelValues(op, outcome).Inc()
}

// RequestCount returns how many requests of an operation were sent, of any
// outcome. Tests use it to prove that a resync wrote nothing.
func RequestCount(op string) float64 {
	var total float64
	for _, outcome := range []string{"success", "not_found", "error"} {
		total += counter.Value(requestsTotal.WithLabelValues(op, outcome))
	}
	return total
}
