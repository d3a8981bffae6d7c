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
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/carbogame/vault-keycloak-operator/internal/vaultclient"
)

// CountingProxy is a reverse proxy on loopback in front of a real service
// (Vault, Keycloak): the operator is pointed at it, and every request it
// sends is counted by the class a classifier gives it (read, write, login…)
// and by answer status. It is how the benchmarks and fault tests count what
// the operator asks of a service, independently of the operator's own
// metrics (which they cross-check).
type CountingProxy struct {
	// URL is where the operator is pointed.
	URL string

	classify func(*http.Request) string
	server   *http.Server

	mu       sync.Mutex
	classes  map[string]int
	statuses map[int]int
	onAnswer func(*http.Request, int)
	// onRequest, when it returns true, answers 503 in place of the service.
	onRequest func(*http.Request) bool
}

// StartCountingProxy serves a proxy of target on a free loopback port.
func StartCountingProxy(target string, classify func(*http.Request) string) (*CountingProxy, error) {
	to, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("proxy target %q: %w", target, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &CountingProxy{URL: "http://" + l.Addr().String(), classify: classify, classes: map[string]int{}, statuses: map[int]int{}}
	rp := httputil.NewSingleHostReverseProxy(to)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
	rp.ModifyResponse = func(resp *http.Response) error {
		p.mu.Lock()
		p.statuses[resp.StatusCode]++
		onAnswer := p.onAnswer
		p.mu.Unlock()
		if onAnswer != nil {
			onAnswer(resp.Request, resp.StatusCode)
		}
		return nil
	}
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class := p.classify(r)
		p.mu.Lock()
		p.classes[class]++
		onRequest := p.onRequest
		p.mu.Unlock()
		if onRequest != nil && onRequest(r) {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// OnAnswer calls fn with each request and its answer's status as the answer
// comes back from the service (nil stops): how a test times exactly when
// the service took a write, without polling the service itself.
func (p *CountingProxy) OnAnswer(fn func(r *http.Request, status int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onAnswer = fn
}

// OnRequest calls fn with each request before it is forwarded (nil stops);
// a request fn returns true for never reaches the service, and is answered
// 503: how a fault test stops the operator between two steps, exactly.
func (p *CountingProxy) OnRequest(fn func(r *http.Request) (drop bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onRequest = fn
}

// Counts returns the requests counted so far by class.
func (p *CountingProxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.classes)
}

// Statuses returns the answers counted so far by HTTP status.
func (p *CountingProxy) Statuses() map[int]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.statuses)
}

// Total is the number of requests counted so far.
func (p *CountingProxy) Total() int {
	n := 0
	for _, c := range p.Counts() {
		n += c
	}
	return n
}

// Close stops the proxy.
func (p *CountingProxy) Close() { _ = p.server.Close() }

// Difference is after minus before, class by class.
func Difference[V ~int | ~int64](after, before map[string]V) map[string]V {
	d := map[string]V{}
	for k, v := range after {
		if v-before[k] != 0 {
			d[k] = v - before[k]
		}
	}
	return d
}

// ClassifyVault tells Vault requests apart by what they cost: "login",
// "renew", "lookup" (of the caller's own token), "list" (names of many
// objects), "read" and "write".
func ClassifyVault(r *http.Request) string {
	switch {
	case strings.HasSuffix(r.URL.Path, "/login"):
		return "login"
	case strings.HasSuffix(r.URL.Path, "/renew-self"):
		return "renew"
	case strings.HasSuffix(r.URL.Path, "/lookup-self"):
		return "lookup"
	case strings.HasSuffix(r.URL.Path, "/sys/health"):
		// A server's check (VaultServer status, outage probe), not a read
		// of any object's.
		return "health"
	case strings.Contains(r.URL.Path, "/sys/policies/acl/"+vaultclient.RegistrationPrefix):
		// A VaultServer check's registration of the cluster: a cost per
		// server and check, not per object.
		return "registration"
	case r.Method == "LIST" || r.URL.Query().Get("list") == "true":
		return "list"
	case r.Method == http.MethodGet:
		return "read"
	}
	return "write"
}
