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
	"net"
	"sync"
)

// Link is the network path from the operator to one service, which a test
// can cut: it forwards each TCP connection made to Addr to the service.
// Cut breaks the open connections and closes each new one at once, which
// is what the operator sees of a server stopped behind a load balancer
// (connection reset, EOF); Restore forwards again. The listener stays
// open, so no other process can take the address meanwhile. It stands for
// a stopped service when the test may not stop the server itself (the
// shared Keycloak serves other suites at the same time).
type Link struct {
	// Addr is where the operator connects (host:port).
	Addr   string
	target string
	l      net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// StartLink listens on a free loopback port and forwards to target (host:port).
func StartLink(target string) (*Link, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	k := &Link{Addr: l.Addr().String(), target: target, l: l, conns: map[net.Conn]struct{}{}}
	go k.serve()
	return k, nil
}

func (k *Link) serve() {
	for {
		in, err := k.l.Accept()
		if err != nil {
			return
		}
		go k.forward(in)
	}
}

func (k *Link) forward(in net.Conn) {
	if !k.track(in) {
		return
	}
	out, err := net.Dial("tcp", k.target)
	if err != nil {
		k.untrack(in)
		return
	}
	if !k.track(out) {
		k.untrack(in)
		return
	}
	pipe(in, out)
	k.untrack(in, out)
}

// track records a connection, or closes it when the link is cut.
func (k *Link) track(c net.Conn) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cut {
		_ = c.Close()
		return false
	}
	k.conns[c] = struct{}{}
	return true
}

func (k *Link) untrack(conns ...net.Conn) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(k.conns, c)
	}
}

// Cut breaks the open connections and every new one.
func (k *Link) Cut() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cut = true
	for c := range k.conns {
		_ = c.Close()
		delete(k.conns, c)
	}
}

// Restore forwards new connections again.
func (k *Link) Restore() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cut = false
}

// Close stops listening and breaks every connection.
func (k *Link) Close() {
	k.Cut()
	_ = k.l.Close()
}
