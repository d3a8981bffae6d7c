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
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Nerzal/gocloak/v13"
)

// Regenerations of client secrets, as a realm's admin events record them:
// by anyone (another cluster's operator, an admin in the console), read
// with one request per realm, empty unless something happened. Keycloak
// 26.2 and later answer the query (a time in milliseconds, an order);
// earlier ones refuse it (Unsupported).

const (
	// regenerationsPage is how many events one read returns at most; a
	// full page is followed by the next one at once.
	regenerationsPage = 100
	// regenerationsOverlap is read again at each read: an event stored a
	// moment after a later one was read (another Keycloak node, a slow
	// commit) is still found; the ids already seen are skipped.
	regenerationsOverlap = 2 * time.Second
	// regenerationsPages bounds one read's pages: the rest waits a period.
	regenerationsPages = 5
)

// EventsCursor is where a realm's admin events were read up to: the time
// (Keycloak's clock) of the last one, and the ids of those of the overlap
// already read. The zero value starts from the newest event: what came
// before is history to a process that reads every client at its first pass.
type EventsCursor struct {
	At   time.Time
	seen map[string]time.Time
}

// Regenerations are the clients whose secret Keycloak issued after a
// cursor, and the cursor to read from next.
type Regenerations struct {
	// ClientIDs are the clientIds of the regenerated clients.
	ClientIDs []string
	Cursor    EventsCursor
}

// adminEvent is the part of an admin event that is read: its id, time and
// the path it acted on. The representation (which holds the new secret
// where the realm stores details) is never decoded.
type adminEvent struct {
	ID           string `json:"id"`
	Time         int64  `json:"time"`
	ResourcePath string `json:"resourcePath"`
}

// RegenerationsSince reads realm's admin events of client secrets issued
// after cursor. Keycloak answers 403 (Forbidden) without the view-events
// role, 400 (Unsupported) before 26.2, and nothing while the realm's admin
// events are off.
func (c *Client) RegenerationsSince(ctx context.Context, realm string, cursor EventsCursor) (Regenerations, error) {
	if cursor.At.IsZero() {
		events, err := c.adminEvents(ctx, realm, url.Values{"direction": {"desc"}, "max": {"1"}})
		next := EventsCursor{At: time.UnixMilli(0)} // a realm without such an event: from its first
		if len(events) > 0 {
			next.At = time.UnixMilli(events[0].Time)
		}
		return Regenerations{Cursor: next}, err
	}
	out := Regenerations{Cursor: EventsCursor{At: cursor.At, seen: maps.Clone(cursor.seen)}}
	if out.Cursor.seen == nil {
		out.Cursor.seen = map[string]time.Time{}
	}
	from := cursor.At.Add(-regenerationsOverlap)
	ids := map[string]bool{}
	for range regenerationsPages {
		events, err := c.adminEvents(ctx, realm, url.Values{"direction": {"asc"}, "max": {strconv.Itoa(regenerationsPage)},
			"dateFrom": {strconv.FormatInt(max(from.UnixMilli(), 0), 10)}})
		if err != nil {
			return Regenerations{Cursor: cursor}, err
		}
		for _, e := range events {
			at := time.UnixMilli(e.Time)
			if _, read := out.Cursor.seen[e.ID]; read || (e.ID == "" && !at.After(cursor.At)) {
				continue
			}
			if e.ID != "" {
				out.Cursor.seen[e.ID] = at
			}
			out.Cursor.At = maxTime(out.Cursor.At, at)
			if id, ok := strings.CutSuffix(strings.TrimPrefix(e.ResourcePath, "clients/"), "/client-secret"); ok {
				ids[id] = true
			}
		}
		if len(events) < regenerationsPage {
			break
		}
		from = time.UnixMilli(events[len(events)-1].Time)
	}
	for id, t := range out.Cursor.seen {
		if t.Before(out.Cursor.At.Add(-regenerationsOverlap)) {
			delete(out.Cursor.seen, id)
		}
	}
	for id := range ids {
		clientID, err := c.clientIDOf(ctx, realm, id)
		if err != nil {
			return Regenerations{Cursor: cursor}, err
		}
		if clientID != "" {
			out.ClientIDs = append(out.ClientIDs, clientID)
		}
	}
	return out, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// adminEvents reads one page of realm's admin events of client secrets.
func (c *Client) adminEvents(ctx context.Context, realm string, q url.Values) ([]adminEvent, error) {
	q.Set("operationTypes", "ACTION")
	q.Set("resourceTypes", "CLIENT")
	q.Set("resourcePath", "clients/*/client-secret")
	var events []adminEvent
	err := c.call(ctx, OpAdminEvents, func(token string) error {
		events = nil
		resp, err := c.gc.RestyClient().R().SetContext(ctx).SetAuthToken(token).SetQueryParamsFromValues(q).
			SetResult(&events).Get(c.adminURL("realms", realm, "admin-events"))
		return answer(resp, err)
	})
	if err != nil {
		return nil, fmt.Errorf("read the admin events of realm %q: %w", realm, err)
	}
	return events, nil
}

// clientIDOf is the clientId of the client of internal id in realm: the one
// this client looked up, else Keycloak's answer (a client rebuilt since, or
// never read here); "" for a client deleted since.
func (c *Client) clientIDOf(ctx context.Context, realm, id string) (string, error) {
	found := ""
	c.clientIDs.Range(func(key, value any) bool {
		r, clientID, _ := strings.Cut(key.(string), "\x00")
		if r == realm && value.(knownID).id == id {
			found = clientID
			return false
		}
		return true
	})
	if found != "" {
		return found, nil
	}
	var cl *gocloak.Client
	err := c.call(ctx, OpFindClient, func(token string) (err error) {
		cl, err = c.gc.GetClient(ctx, token, realm, id)
		return err
	})
	switch {
	case status(err) == http.StatusNotFound:
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read client %s of realm %q: %w", id, realm, err)
	}
	return gocloak.PString(cl.ClientID), nil
}

// Unsupported reports whether Keycloak refused a query it does not know
// (400: the admin events' query before Keycloak 26.2).
func Unsupported(err error) bool { return status(err) == http.StatusBadRequest }
