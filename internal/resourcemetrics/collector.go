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

// Package resourcemetrics counts the operator's resources by kind,
// namespace and Ready condition, at each scrape, from the manager's cache:
// what an alert on "not Ready for long" needs without kubectl. It reads
// conditions only: no spec, no status value that could hold a secret.
package resourcemetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	secretsv1beta1 "github.com/carbogame/vault-keycloak-operator/api/secrets/v1beta1"
	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/internal/shard"
)

// Name is the gauge's name.
const Name = "vko_resources"

var desc = prometheus.NewDesc(Name,
	"Resources by kind, namespace (empty for cluster-scoped kinds), Ready status (True, False, Unknown; Unknown also before the first report; Connected for KeycloakServers) and its reason.",
	[]string{"kind", "namespace", "ready", "reason"}, nil)

// namespaceLabel is the label of the per-namespace gauges.
const namespaceLabel = "namespace"

// OverdueName is the gauge of scheduled rotations past due.
const OverdueName = "vko_rotations_overdue"

var overdueDesc = prometheus.NewDesc(OverdueName,
	"KeycloakClientCredentials by namespace whose scheduled rotation is due and not under way (a rotation refused for want of a grace period, or failing, stays here).",
	[]string{namespaceLabel}, nil)

// WaitingName is the gauge of rotations waiting for their consumers.
const WaitingName = "vko_rotations_waiting_for_consumers"

var waitingDesc = prometheus.NewDesc(WaitingName,
	"KeycloakClientCredentials by namespace whose rotation's grace period is over and whose previous secret waits for consumers still rolling out (spec.rotation.consumers).",
	[]string{namespaceLabel}, nil)

// source is the cache the collector lists from, and when it may: nil
// until the manager is set up (then nothing is reported).
var source atomic.Pointer[cacheSource]

type cacheSource struct {
	reader client.Reader
	// elected closes when this replica leads: only the leader reports,
	// so that the series of two replicas do not add up in a sum.
	elected <-chan struct{}
	// shard is what the leader reports: what it reconciles (the VaultApps
	// and credentials of its namespaces; on shard 0 the servers too).
	// The series of the shards' leaders add up to the cluster's.
	shard shard.Shard
}

// Use makes the collector list from r (the manager's cache) once elected
// is closed (the manager's Elected()), reporting what s reconciles.
func Use(r client.Reader, elected <-chan struct{}, s shard.Shard) {
	source.Store(&cacheSource{reader: r, elected: elected, shard: s})
}

// reports says whether the source reports the series of kind in namespace.
func (src *cacheSource) reports(kind, namespace string) bool {
	if kind == "VaultApp" || kind == "KeycloakClientCredential" {
		return src.shard.Owns(namespace)
	}
	return src.shard.RunsClusterJobs()
}

type collector struct{}

func (collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- desc
	ch <- overdueDesc
	ch <- waitingDesc
}

// Collect lists each kind from the cache; a kind the cache cannot list yet
// (not synced) is left out of this scrape.
func (collector) Collect(ch chan<- prometheus.Metric) {
	src := source.Load()
	if src == nil {
		return
	}
	select {
	case <-src.elected:
	default:
		return // a standby: the leader reports
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for kind, list := range lists() {
		// Read only: the cache's objects need no copy.
		if err := src.reader.List(ctx, list, client.UnsafeDisableDeepCopy, client.DisableReadYourWritesConsistency); err != nil {
			continue
		}
		for key, n := range Count(kind, list) {
			if !src.reports(key.Kind, key.Namespace) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), key.Kind, key.Namespace, key.Ready, key.Reason)
		}
		if credentials, ok := list.(*secretsv1beta1.KeycloakClientCredentialList); ok {
			now := time.Now()
			for ns, n := range Overdue(credentials, now) {
				if !src.reports("KeycloakClientCredential", ns) {
					continue
				}
				ch <- prometheus.MustNewConstMetric(overdueDesc, prometheus.GaugeValue, float64(n), ns)
			}
			for ns, n := range WaitingForConsumers(credentials, now) {
				if !src.reports("KeycloakClientCredential", ns) {
					continue
				}
				ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(n), ns)
			}
		}
	}
}

// Overdue counts, by namespace, the credentials whose scheduled rotation
// was due before now and has not begun (a rotation under way is not
// overdue). A namespace with none is reported at 0, so that an alert's
// series resolves.
func Overdue(list *secretsv1beta1.KeycloakClientCredentialList, now time.Time) map[string]int {
	out := map[string]int{}
	for i := range list.Items {
		k := &list.Items[i]
		due, scheduled := k.RotationDueAt()
		if !scheduled {
			continue
		}
		out[k.Namespace] += 0
		underWay := k.Status.Rotation != nil && k.Status.Rotation.Phase != secretsv1beta1.RotationCompleted
		if due.Before(now) && !underWay {
			out[k.Namespace]++
		}
	}
	return out
}

func lists() map[string]client.ObjectList {
	return map[string]client.ObjectList{
		"VaultApp":                 &vaultv1beta1.VaultAppList{},
		"VaultServer":              &vaultv1beta1.VaultServerList{},
		"KeycloakClientCredential": &secretsv1beta1.KeycloakClientCredentialList{},
		"KeycloakServer":           &secretsv1beta1.KeycloakServerList{},
	}
}

// Key is one series of the gauge.
type Key struct{ Kind, Namespace, Ready, Reason string }

// Count is how many objects of list have each Ready status and reason
// (KeycloakServers have no Ready: their Connected condition stands for it).
func Count(kind string, list client.ObjectList) map[Key]int {
	out := map[Key]int{}
	add := func(namespace string, conds []metav1.Condition, readyType string) {
		key := Key{Kind: kind, Namespace: namespace, Ready: string(metav1.ConditionUnknown)}
		if c := meta.FindStatusCondition(conds, readyType); c != nil {
			key.Ready, key.Reason = string(c.Status), c.Reason
		}
		out[key]++
	}
	switch l := list.(type) {
	case *vaultv1beta1.VaultAppList:
		for i := range l.Items {
			add(l.Items[i].Namespace, l.Items[i].Status.Conditions, vaultv1beta1.TypeReady)
		}
	case *vaultv1beta1.VaultServerList:
		for i := range l.Items {
			add("", l.Items[i].Status.Conditions, vaultv1beta1.TypeReady)
		}
	case *secretsv1beta1.KeycloakClientCredentialList:
		for i := range l.Items {
			add(l.Items[i].Namespace, l.Items[i].Status.Conditions, secretsv1beta1.TypeReady)
		}
	case *secretsv1beta1.KeycloakServerList:
		for i := range l.Items {
			add("", l.Items[i].Status.Conditions, secretsv1beta1.TypeConnected)
		}
	}
	return out
}

func init() { metrics.Registry.MustRegister(collector{}) }

// WaitingForConsumers counts, by namespace, the credentials whose
// rotation's grace period ended and whose previous secret still waits for
// a consumer's rollout. A namespace whose credentials name consumers is
// reported at 0 when none waits, so that an alert's series resolves.
func WaitingForConsumers(list *secretsv1beta1.KeycloakClientCredentialList, now time.Time) map[string]int {
	out := map[string]int{}
	for i := range list.Items {
		k := &list.Items[i]
		if k.Spec.Rotation == nil || k.Spec.Rotation.Consumers == nil {
			continue
		}
		out[k.Namespace] += 0
		rot := k.Status.Rotation
		if rot == nil || rot.Phase != secretsv1beta1.RotationGracePeriod || rot.GraceEndsTime == nil || now.Before(rot.GraceEndsTime.Time) {
			continue
		}
		for _, c := range rot.Consumers {
			if c.State == secretsv1beta1.ConsumerRollingOut {
				out[k.Namespace]++
				break
			}
		}
	}
	return out
}
