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

package tenancy

import "k8s.io/apimachinery/pkg/util/validation/field"

// A Check is one named rule of what a namespace may have. The rules of a
// decision form a Chain run in order, as cert-manager's policies.Chain:
// each returns its refusals, naming the field and the grant; a Final rule
// that refuses ends the chain, and nothing is granted.
type Check[In any] struct {
	Name   string
	Refuse func(In) field.ErrorList
	// Final: a refusal of this rule leaves nothing for the later ones to
	// judge (the namespace is granted nothing, or the request is refused
	// whole).
	Final bool
}

// Chain is the ordered rules of one decision.
type Chain[In any] []Check[In]

// Verdict is what a Chain decided.
type Verdict struct {
	// Refused is every refusal, in the order of the rules.
	Refused field.ErrorList
	// EndedBy names the Final rule that refused, "" when none did.
	EndedBy string
}

// GrantsNothing reports whether a Final rule refused.
func (v Verdict) GrantsNothing() bool { return v.EndedBy != "" }

// Evaluate runs the rules on in, in order.
func (c Chain[In]) Evaluate(in In) Verdict {
	var v Verdict
	for _, check := range c {
		refused := check.Refuse(in)
		v.Refused = append(v.Refused, refused...)
		if check.Final && len(refused) > 0 {
			v.EndedBy = check.Name
			return v
		}
	}
	return v
}
