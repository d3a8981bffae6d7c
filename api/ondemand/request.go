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

// Package ondemand reads the requests users make by annotation (refresh
// now, rotate now): the annotation's value is a request id, honoured once
// and echoed in the status, as the Vault Secrets Operator's and
// cert-manager's renew requests are. Writing a new id is asking again.
package ondemand

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxIDLength bounds a request id: it is echoed in the status and in Events.
const MaxIDLength = 63

var idPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._:-]*[A-Za-z0-9])?$`)

// Pending is the request id in annotations[key] not honoured yet (last is
// the id the status echoes), "" when there is none. An id that breaks the
// rule is never pending: the webhook refuses it, and the controller does
// not act on what slipped past (an object written while the webhook was
// away).
func Pending(annotations map[string]string, key, last string) string {
	id := annotations[key]
	if id == "" || id == last || Validate(key, id) != nil {
		return ""
	}
	return id
}

// Changed is the request id in annotations[key] when an update brings a
// new one, "" otherwise: what the webhook checks the requester's rights on.
func Changed(old, annotations map[string]string, key string) string {
	if id := annotations[key]; id != old[key] {
		return id
	}
	return ""
}

// Validate refuses an id that could not be echoed as it is.
func Validate(key, id string) *field.Error {
	path := field.NewPath("metadata", "annotations").Key(key)
	if len(id) > MaxIDLength || !idPattern.MatchString(id) {
		return field.Invalid(path, id, fmt.Sprintf("a request id is 1 to %d letters, digits, '.', '_', ':' or '-', starting and ending with a letter or digit (a timestamp or a change number)", MaxIDLength))
	}
	return nil
}
