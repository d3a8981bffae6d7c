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

package outage

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// What an on-call engineer reads of an outage, without kubectl: which
// service is down, how many resources wait for it, and what the probes
// said. Services are Vault servers and Keycloak servers (a few per
// cluster): the label stays small.
// serviceLabel names the Vault or Keycloak server in every outage metric.
const serviceLabel = "service"

var (
	probesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vko_outage_probes_total",
		Help: "Probes of a service that did not answer, by service and outcome (answered, no_answer).",
	}, []string{serviceLabel, "outcome"})
	releasedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vko_outage_released_total",
		Help: "Resources queued at once because the service they waited for answered again, by service.",
	}, []string{serviceLabel})
	heldDesc = prometheus.NewDesc("vko_outage_held_resources",
		"Resources waiting for a service that does not answer, by service (0 or absent: none).", []string{serviceLabel}, nil)
)

// running are the Trackers started in this process (one per controller);
// the collector reads their state at each scrape.
var running sync.Map // *Tracker → struct{}

type heldCollector struct{}

func (heldCollector) Describe(ch chan<- *prometheus.Desc) { ch <- heldDesc }

func (heldCollector) Collect(ch chan<- prometheus.Metric) {
	held := map[string]int{}
	running.Range(func(k, _ any) bool {
		o := k.(*Tracker)
		o.mu.Lock()
		for service, w := range o.down {
			held[service] += len(w.waiting)
		}
		o.mu.Unlock()
		return true
	})
	for service, n := range held {
		ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(n), service)
	}
}

func init() {
	metrics.Registry.MustRegister(probesTotal, releasedTotal, heldCollector{})
}
