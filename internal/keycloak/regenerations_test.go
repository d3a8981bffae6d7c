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
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A realm's admin events as Keycloak 26.2+ answers them: each read starts
// from the newest event, then returns each regeneration once, even one
// stored late within the overlap, and names clients by clientId (one this
// client never looked up is asked of Keycloak).
func TestRegenerationsAreReadOnceEach(t *testing.T) {
	type event struct {
		ID           string `json:"id"`
		Time         int64  `json:"time"`
		ResourcePath string `json:"resourcePath"`
	}
	var mu sync.Mutex
	events := []event{{"e0", 1000, "clients/id-old/client-secret"}}
	kc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/protocol/openid-connect/token"):
			_, _ = io.WriteString(w, `{"access_token":"t","expires_in":60}`)
		case strings.HasSuffix(r.URL.Path, "/admin-events"):
			mu.Lock()
			defer mu.Unlock()
			q := r.URL.Query()
			var out []event
			if q.Get("direction") == "desc" {
				out = events[len(events)-1:]
			} else {
				from, _ := strconv.ParseInt(q.Get("dateFrom"), 10, 64)
				for _, e := range events {
					if e.Time >= from {
						out = append(out, e)
					}
				}
			}
			_ = json.NewEncoder(w).Encode(out)
		case strings.HasSuffix(r.URL.Path, "/clients/id-b"):
			_, _ = io.WriteString(w, `{"id":"id-b","clientId":"b"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer kc.Close()
	c, err := newClient("test", Config{URL: kc.URL, Auth: ClientCredentials, ClientID: "vko", ClientSecret: "x"})
	if err != nil {
		t.Fatal(err)
	}
	c.clientIDs.Store("apps\x00a", knownID{id: "id-a"})
	ctx := context.Background()
	read := func(cursor EventsCursor) Regenerations {
		t.Helper()
		got, err := c.RegenerationsSince(ctx, "apps", cursor)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got.ClientIDs)
		return got
	}
	got := read(EventsCursor{})
	if len(got.ClientIDs) != 0 || got.Cursor.At.UnixMilli() != 1000 {
		t.Fatalf("the first read: %v from %v; want nothing, from the newest event", got.ClientIDs, got.Cursor.At)
	}
	mu.Lock()
	events = append(events, event{"e1", 3000, "clients/id-a/client-secret"})
	mu.Unlock()
	got = read(got.Cursor)
	if !slices.Equal(got.ClientIDs, []string{"a"}) {
		t.Fatalf("regenerated: %v, want [a]", got.ClientIDs)
	}
	// Stored late, with a time before the last one read: still found.
	mu.Lock()
	events = append(events, event{"e2", 2500, "clients/id-b/client-secret"}, event{"e3", 3000, "clients/id-gone/client-secret"})
	mu.Unlock()
	got = read(got.Cursor)
	if !slices.Equal(got.ClientIDs, []string{"b"}) {
		t.Fatalf("regenerated: %v, want [b] (a read before, id-gone deleted since)", got.ClientIDs)
	}
	if got = read(got.Cursor); len(got.ClientIDs) != 0 {
		t.Fatalf("read again: %v", got.ClientIDs)
	}
}
