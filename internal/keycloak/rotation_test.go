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
	"encoding/json"
	"testing"
	"time"
)

func TestGraceOf(t *testing.T) {
	const profiles = `{"profiles":[{"name":"rot","executors":[{"executor":"secret-rotation","configuration":{"expiration-period":"31536000","rotated-expiration-period":"3600"}}]},
		{"name":"short","executors":[{"executor":"secret-rotation","configuration":{"rotated-expiration-period":"600"}}]},
		{"name":"other","executors":[{"executor":"pkce-enforcer","configuration":{}}]}],"globalProfiles":[]}`
	policy := func(enabled bool, conditions string, profile string) string {
		return `{"policies":[{"name":"p","enabled":` + map[bool]string{true: "true", false: "false"}[enabled] + `,"conditions":` + conditions + `,"profiles":["` + profile + `"]}]}`
	}
	confidential := `[{"condition":"client-access-type","configuration":{"type":["confidential"]}}]`
	for name, tc := range map[string]struct {
		policies string
		offered  bool
		lifetime time.Duration
	}{
		"confidential clients":       {policy(true, confidential, "rot"), true, time.Hour},
		"any client":                 {policy(true, `[{"condition":"any-client","configuration":{}}]`, "rot"), true, time.Hour},
		"policy disabled":            {policy(false, confidential, "rot"), false, 0},
		"profile without executor":   {policy(true, confidential, "other"), false, 0},
		"public clients only":        {policy(true, `[{"condition":"client-access-type","configuration":{"type":["public"]}}]`, "rot"), false, 0},
		"negative logic":             {policy(true, `[{"condition":"any-client","configuration":{"is-negative-logic":true}}]`, "rot"), false, 0},
		"a condition not evaluated":  {policy(true, `[{"condition":"client-roles","configuration":{"roles":["x"]}}]`, "rot"), false, 0},
		"no conditions (never hold)": {policy(true, `[]`, "rot"), false, 0},
		"a shorter policy that may apply": {`{"policies":[{"name":"a","enabled":true,"conditions":` + confidential + `,"profiles":["rot"]},
			{"name":"b","enabled":true,"conditions":[{"condition":"client-roles","configuration":{}}],"profiles":["short"]}]}`, true, 10 * time.Minute},
	} {
		var pol clientPolicies
		var prof clientProfiles
		if err := json.Unmarshal([]byte(tc.policies), &pol); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(profiles), &prof); err != nil {
			t.Fatal(err)
		}
		g := graceOf(pol, prof)
		if g.Offered != tc.offered || g.Lifetime != tc.lifetime || (!g.Offered && g.Why == "") {
			t.Errorf("%s: %+v, want offered %v for %s", name, g, tc.offered, tc.lifetime)
		}
	}
}

func TestGraceOfAnUnreadableLifetimeIsNotOffered(t *testing.T) {
	var prof clientProfiles
	var pol clientPolicies
	_ = json.Unmarshal([]byte(`{"profiles":[{"name":"rot","executors":[{"executor":"secret-rotation","configuration":{"rotated-expiration-period":"1h"}}]}]}`), &prof)
	_ = json.Unmarshal([]byte(`{"policies":[{"name":"p","enabled":true,"conditions":[{"condition":"any-client","configuration":{}}],"profiles":["rot"]}]}`), &pol)
	if g := graceOf(pol, prof); g.Offered {
		t.Fatalf("%+v: a lifetime that is not a number of seconds was read as some grace", g)
	}
}
