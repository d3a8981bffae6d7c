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
	"io"
	"net"
	"slices"
	"sync"
)

// Service stands for a Kubernetes Service in front of several replicas: it
// accepts TCP connections on an address and forwards each to the first
// backend that accepts it, so that a killed replica's traffic goes to the
// others (the webhooks of two managers, behind the one address the API
// server calls).
type Service struct {
	l  net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	backends []string
}

// StartService listens on addr and forwards to backends, in order.
func StartService(addr string, backends ...string) (*Service, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Service{l: l, backends: backends}
	go s.serve()
	return s, nil
}

func (s *Service) serve() {
	for {
		in, err := s.l.Accept()
		if err != nil {
			return
		}
		s.wg.Go(func() { s.forward(in) })
	}
}

// Add puts a backend behind the Service, after the others.
func (s *Service) Add(backend string) {
	s.mu.Lock()
	s.backends = append(s.backends, backend)
	s.mu.Unlock()
}

func (s *Service) forward(in net.Conn) {
	defer func() { _ = in.Close() }()
	s.mu.Lock()
	backends := slices.Clone(s.backends)
	s.mu.Unlock()
	for _, b := range backends {
		out, err := net.Dial("tcp", b)
		if err != nil {
			continue
		}
		pipe(in, out)
		_ = out.Close()
		return
	}
}

// pipe copies both ways between two connections until either side ends.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(a, b); done <- struct{}{} }()
	go func() { _, _ = io.Copy(b, a); done <- struct{}{} }()
	<-done
}

// Close stops accepting connections.
func (s *Service) Close() { _ = s.l.Close() }
