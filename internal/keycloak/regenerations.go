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
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Regenerations of client secrets, as a realm's admin events record them:
// by anyone (another cluster's operator, an admin in the console), read
// with one request per realm, empty unless something happened.

// regenerationsPage is how many events one read returns at most; a full
// page is followed by the next read at once.
const regenerationsPage = 100

// Regenerations are the clients whose secret Keycloak issued after a
// cursor, and the cursor to read from next.
type Regenerations struct {
	// ClientIDs are the clientIds of the regenerated clients this client
	// ever looked up (the ones this process reads); the others are
	// nobody's here.
	ClientIDs []string
	// Cursor is the time, on Keycloak's clock, of the last event read.
	Cursor time.Time
	// More is set when the page was full: read again at once.
	More bool
}

// adminEvent is the part of an admin event that is read: its time and the
// path it acted on. The representation (which holds the new secret where
// the realm stores details) is never decoded.
type adminEvent struct {
	Time         int64  `json:"time"`
	ResourcePath string `json:"resourcePath"`
}

// RegenerationsSince reads realm's admin events of client secrets issued
// after cursor. A zero cursor reads only the newest event, to start from:
// what came before is history to a process that reads every client at its
// first pass. Keycloak answers 403 without the view-events role, and
// nothing while the realm's admin events are off.
func (c *Client) RegenerationsSince(ctx context.Context, realm string, cursor time.Time) (Regenerations, error) {
	q := url.Values{
		"operationTypes": {"ACTION"},
		"resourceTypes":  {"CLIENT"},
		"resourcePath":   {"clients/*/client-secret"},
	}
	if cursor.IsZero() {
		q.Set("direction", "desc")
		q.Set("max", "1")
	} else {
		q.Set("direction", "asc")
		q.Set("dateFrom", strconv.FormatInt(cursor.UnixMilli(), 10))
		q.Set("max", strconv.Itoa(regenerationsPage))
	}
	var events []adminEvent
	err := c.call(ctx, OpAdminEvents, func(token string) error {
		events = nil
		resp, err := c.gc.RestyClient().R().SetContext(ctx).SetAuthToken(token).SetQueryParamsFromValues(q).
			SetResult(&events).Get(c.adminURL("realms", realm, "admin-events"))
		return answer(resp, err)
	})
	if err != nil {
		return Regenerations{Cursor: cursor}, err
	}
	out := Regenerations{Cursor: cursor, More: !cursor.IsZero() && len(events) == regenerationsPage}
	if cursor.IsZero() {
		// A realm without such an event yet is read from its first one.
		out.Cursor = time.UnixMilli(0)
	}
	for _, e := range events {
		at := time.UnixMilli(e.Time)
		if !cursor.IsZero() && !at.After(out.Cursor) {
			continue // read before (dateFrom is inclusive)
		}
		out.Cursor = at
		if cursor.IsZero() {
			continue
		}
		if id, ok := strings.CutSuffix(strings.TrimPrefix(e.ResourcePath, "clients/"), "/client-secret"); ok {
			if clientID := c.knownClientID(realm, id); clientID != "" {
				out.ClientIDs = append(out.ClientIDs, clientID)
			}
		}
	}
	return out, nil
}

// knownClientID is the clientId this client looked up for internal id in
// realm, "" when it never did.
func (c *Client) knownClientID(realm, id string) string {
	found := ""
	c.clientIDs.Range(func(key, value any) bool {
		r, clientID, _ := strings.Cut(key.(string), "\x00")
		if r == realm && value.(knownID).id == id {
			found = clientID
			return false
		}
		return true
	})
	return found
}
