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

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestAChainRunsInOrderAndAFinalRefusalEndsIt(t *testing.T) {
	refuse := func(name string) func(string) field.ErrorList {
		return func(in string) field.ErrorList {
			if in == name || in == "all" {
				return field.ErrorList{field.Forbidden(field.NewPath(name), "refused")}
			}
			return nil
		}
	}
	chain := Chain[string]{
		{Name: "a", Refuse: refuse("a")},
		{Name: "b", Refuse: refuse("b"), Final: true},
		{Name: "c", Refuse: refuse("c")},
	}
	for _, tc := range []struct {
		in      string
		refused []string
		endedBy string
	}{
		{"none", nil, ""},
		{"a", []string{"a"}, ""},
		{"c", []string{"c"}, ""},
		{"b", []string{"b"}, "b"},
		{"all", []string{"a", "b"}, "b"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v := chain.Evaluate(tc.in)
			var got []string
			for _, e := range v.Refused {
				got = append(got, e.Field)
			}
			if !slices.Equal(got, tc.refused) || v.EndedBy != tc.endedBy || v.GrantsNothing() != (tc.endedBy != "") {
				t.Fatalf("refused %v ended by %q, want %v ended by %q", got, v.EndedBy, tc.refused, tc.endedBy)
			}
		})
	}
}

// The order is part of the rule: a request the grants do not cover must
// never hear that its client is protected (it would learn the operator's
// login client by guessing), and a namespace a server does not list is
// judged on nothing else.
func TestTheChainsOrder(t *testing.T) {
	var got []string
	for _, c := range KeycloakAccess {
		got = append(got, c.Name)
	}
	if len(got) != 3 || got[1] != "a grant covers the namespace, realm, client and rotation" || got[2] != "the client is not protected" {
		t.Fatalf("KeycloakAccess = %q", got)
	}
	if first := OnVaultServer[0]; first.Name != "the server lists the namespace" || !first.Final {
		t.Fatalf("OnVaultServer starts with %q (final %v)", first.Name, first.Final)
	}
}
