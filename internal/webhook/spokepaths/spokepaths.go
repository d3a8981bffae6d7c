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

// Package spokepaths makes admission errors speak the API version the user wrote.
// The webhooks run on the hub (v1beta1); the API server converts a v1alpha1
// request first, so field paths in errors are the hub's. For a v1alpha1
// request they are renamed to the v1alpha1 fields the author can change.
package spokepaths

import (
	"context"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Rename maps a hub field path (a pattern) to the spoke's (a replacement
// that may use the pattern's groups).
type Rename struct {
	Hub   *regexp.Regexp
	Spoke string
}

// ForRequest renames the fields of errs when the admission request in ctx
// was made in spokeVersion. Errors that the renaming makes identical (one
// per hub rule for a single spoke field) are kept once.
func ForRequest(ctx context.Context, errs field.ErrorList, spokeVersion string, renames []Rename) field.ErrorList {
	req, err := admission.RequestFromContext(ctx)
	if err != nil || req.RequestKind == nil || req.RequestKind.Version != spokeVersion {
		return errs
	}
	var out field.ErrorList
	seen := map[string]bool{}
	for _, e := range errs {
		e := *e
		for _, r := range renames {
			if r.Hub.MatchString(e.Field) {
				e.Field = r.Hub.ReplaceAllString(e.Field, r.Spoke)
				break
			}
		}
		if key := e.Field + e.Type.String() + e.Detail; !seen[key] {
			seen[key] = true
			out = append(out, &e)
		}
	}
	return out
}
