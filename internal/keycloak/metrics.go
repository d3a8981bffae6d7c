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

package keycloak

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/carbogame/vault-keycloak-operator/internal/counter"
)

// requestsTotal counts every request the operator sends to Keycloak.
var requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vko_keycloak_requests_total",
	Help: "Requests sent to Keycloak, by server, operation (login, find_client, read_secret, regenerate_secret, server_info, rotation_policy, invalidate_previous, probe, admin_events) and outcome (success, error).",
}, []string{"server", "operation", "outcome"})

func init() {
	metrics.Registry.MustRegister(requestsTotal)
}

// Operation names, as they appear in the operation label.
const (
	OpLogin            = "login"
	OpFindClient       = "find_client"
	OpReadSecret       = "read_secret"
	OpRegenerateSecret = "regenerate_secret"
	OpServerInfo       = "server_info"
	// OpRotationPolicy reads a realm's client policies and profiles.
	OpRotationPolicy = "rotation_policy"
	// OpInvalidatePrevious ends a rotated secret's validity.
	OpInvalidatePrevious = "invalidate_previous"
	OpProbe              = "probe"
	// OpAdminEvents reads a realm's admin events of regenerated secrets.
	OpAdminEvents = "admin_events"
)

func observe(server, op string, err error) {
	outcome := "success"
	if err != nil {
		outcome = "error"
	}
	requestsTotal.WithLabelValues(server, op, outcome).Inc()
}

// RequestCount returns how many requests of an operation were sent to a
// server, of any outcome. Tests use it to prove there is one login per
// token, not one per reconcile.
func RequestCount(server, op string) float64 {
	return counter.Value(requestsTotal.WithLabelValues(server, op, "success")) +
		counter.Value(requestsTotal.WithLabelValues(server, op, "error"))
}
