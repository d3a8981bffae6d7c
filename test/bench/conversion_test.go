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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vaultv1beta1 "github.com/carbogame/vault-keycloak-operator/api/vault/v1beta1"
	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

// conversion is P6's figures.
type conversion struct {
	Reviews    int           `json:"reviews"`
	WebhookP50 time.Duration `json:"webhookP50Nanos"`
	WebhookP99 time.Duration `json:"webhookP99Nanos"`
	Items      int           `json:"listItems"`
	ListAlpha  time.Duration `json:"listV1alpha1MedianNanos"`
	ListBeta   time.Duration `json:"listV1beta1MedianNanos"`
}

func (c conversion) Ratio() float64 { return float64(c.ListAlpha) / float64(c.ListBeta) }

// conversionCost measures the conversion webhook on one object per review
// (what the API server sends for a GET or a write), and a LIST of the
// fleet in v1alpha1 (every object through the webhook) against v1beta1
// (the storage version, no webhook), alternating, medians.
func (f *fleet) conversionCost(b *testing.B) conversion {
	b.Helper()
	ctx := context.Background()
	hc, err := rest.HTTPClientFor(f.cluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	// envtest's Host ends with a slash.
	host := strings.TrimRight(f.cluster.Config.Host, "/")
	list := func(version string) (time.Duration, int) {
		url := fmt.Sprintf("%s/apis/vault.exemple.com/%s/vaultapps", host, version)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "application/json")
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		took := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("LIST %s: %d %v\n%.500s", url, resp.StatusCode, err, body)
		}
		var items struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &items); err != nil {
			b.Fatal(err)
		}
		return took, len(items.Items)
	}
	var alpha, beta []time.Duration
	var first []byte
	c := conversion{}
	for range 7 {
		t, n := list("v1alpha1")
		alpha = append(alpha, t)
		u, m := list("v1beta1")
		beta = append(beta, u)
		if n != m || n < shape.Size {
			b.Fatalf("LIST returned %d objects in v1alpha1 and %d in v1beta1, want %d", n, m, shape.Size)
		}
		c.Items = n
	}
	slices.Sort(alpha)
	slices.Sort(beta)
	c.ListAlpha, c.ListBeta = alpha[len(alpha)/2], beta[len(beta)/2]

	// One stored object, as the API server sends it to the webhook.
	var app vaultv1beta1.VaultApp
	if err := f.c.Get(ctx, client.ObjectKey{Namespace: nsName(0), Name: fleetRun + "-0000"}, &app); err != nil {
		b.Fatal(err)
	}
	app.SetGroupVersionKind(vaultv1beta1.GroupVersion.WithKind("VaultApp"))
	if first, err = json.Marshal(&app); err != nil {
		b.Fatal(err)
	}
	// The webhook's own latency: measured at rest, not behind the Events
	// the operator's run still writes (paced) or etcd's compaction of the
	// runs deleted before (CI51 4.9 ms, a run at 5.3 ms without this).
	waitQuiet(b)
	wc := harness.InsecureWebhookClient()
	var times []time.Duration
	const reviews = 1000
	for i := range reviews {
		review := apiextensionsv1.ConversionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
			Request: &apiextensionsv1.ConversionRequest{UID: types.UID(fmt.Sprintf("bench-%d", i)), DesiredAPIVersion: "vault.exemple.com/v1alpha1",
				Objects: []runtime.RawExtension{{Raw: first}}},
		}
		body, _ := json.Marshal(review)
		start := time.Now()
		resp, err := wc.Post(f.manager.WebhookURL+"/convert", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		times = append(times, time.Since(start))
		var answer apiextensionsv1.ConversionReview
		if err := json.Unmarshal(out, &answer); err != nil || answer.Response == nil || answer.Response.Result.Status != "Success" || len(answer.Response.ConvertedObjects) != 1 {
			b.Fatalf("conversion review answered %d: %.300s", resp.StatusCode, out)
		}
	}
	slices.Sort(times)
	c.Reviews, c.WebhookP50, c.WebhookP99 = reviews, times[len(times)/2], percentile(times, 0.99)
	b.Logf("P6 conversion: webhook p50 %s p99 %s per object; LIST of %d VaultApps: v1alpha1 %s, v1beta1 %s, ratio %.2f",
		c.WebhookP50, c.WebhookP99, c.Items, c.ListAlpha.Round(time.Millisecond), c.ListBeta.Round(time.Millisecond), c.Ratio())
	return c
}
