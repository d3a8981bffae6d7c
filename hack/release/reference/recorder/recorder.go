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

// Package recorder notes every Prometheus collector registered with
// controller-runtime's metrics.Registry, and by which package, so that the
// reference can list the operator's metrics with their descriptors: a
// registry's Gather says nothing of a vector that has no series yet.
//
// Why an init of its own: Go initializes, among the packages whose imports
// are ready, the one whose import path sorts first (the spec's "Package
// initialization"). This package only needs controller-runtime's metrics
// package, and its path (…/hack/release/…) sorts before the operator's
// …/internal/… packages, which register from their init: so the registry
// is wrapped before any of them registers. The reference checks the result
// against the registrations the sources make (a package missed fails it).
package recorder

import (
	"runtime"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Registration is one collector and the package that registered it.
type Registration struct {
	// Package is the import path of the code that called Register.
	Package   string
	Collector prometheus.Collector
}

var (
	mu   sync.Mutex
	seen []Registration
)

// recording passes every call on to the registry it wraps, noting the
// collectors first.
type recording struct {
	metrics.RegistererGatherer
}

func init() { metrics.Registry = recording{metrics.Registry} }

// Register notes c, then registers it.
func (r recording) Register(c prometheus.Collector) error {
	note(callerPackage(), c)
	return r.RegistererGatherer.Register(c)
}

// MustRegister notes cs, then registers them.
func (r recording) MustRegister(cs ...prometheus.Collector) {
	note(callerPackage(), cs...)
	r.RegistererGatherer.MustRegister(cs...)
}

func note(pkg string, cs ...prometheus.Collector) {
	mu.Lock()
	defer mu.Unlock()
	for _, c := range cs {
		seen = append(seen, Registration{Package: pkg, Collector: c})
	}
}

// Registrations are the collectors registered so far, in order.
func Registrations() []Registration {
	mu.Lock()
	defer mu.Unlock()
	return append([]Registration(nil), seen...)
}

// callerPackage is the import path of the function that called Register
// or MustRegister.
func callerPackage() string {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return ""
	}
	return PackageOf(runtime.FuncForPC(pc).Name())
}

// PackageOf is the import path in a function's full name, as the runtime
// spells it: "example.com/a/b.init.0" or "example.com/a/b.(*T).M" are in
// "example.com/a/b".
func PackageOf(funcName string) string {
	slash := strings.LastIndex(funcName, "/")
	dot := strings.Index(funcName[slash+1:], ".")
	if dot < 0 {
		return funcName
	}
	return funcName[:slash+1+dot]
}
