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
	"fmt"
	"slices"
	"strconv"
	"time"
)

// graceOf finds the grace an applying policy gives: the shortest of every
// policy that may apply (one whose conditions cannot be evaluated may apply
// too, and shorten it), offered only when one surely applies. A lifetime
// that does not parse offers nothing.
func graceOf(policies clientPolicies, profiles clientProfiles) Grace {
	lifetimes := map[string]time.Duration{}
	for _, p := range append(profiles.Profiles, profiles.GlobalProfiles...) {
		for _, e := range p.Executors {
			if e.Executor != rotationExecutor {
				continue
			}
			// Keycloak's default when the executor names none: two days.
			life := 48 * time.Hour
			if v, ok := e.Configuration[rotatedLifetime]; ok {
				secs, err := strconv.Atoi(fmt.Sprint(v))
				if err != nil || secs <= 0 {
					return Grace{Why: fmt.Sprintf("the secret-rotation executor of client profile %q has a %s that is not a number of seconds", p.Name, rotatedLifetime)}
				}
				life = time.Duration(secs) * time.Second
			}
			if known, ok := lifetimes[p.Name]; !ok || life < known {
				lifetimes[p.Name] = life
			}
		}
	}
	if len(lifetimes) == 0 {
		return Grace{Why: "no client profile of the realm holds the secret-rotation executor"}
	}
	var shortest time.Duration
	applies := false
	for _, p := range append(policies.Policies, policies.GlobalPolicies...) {
		if !p.Enabled {
			continue
		}
		for _, name := range p.Profiles {
			life, ok := lifetimes[name]
			if !ok {
				continue
			}
			applies = applies || appliesToConfidential(p.Conditions)
			if shortest == 0 || life < shortest {
				shortest = life
			}
		}
	}
	if !applies {
		return Grace{Why: "no enabled client policy applies a profile with the secret-rotation executor to every confidential client"}
	}
	return Grace{Offered: true, Lifetime: shortest}
}

// appliesToConfidential: every condition is one that holds for any
// confidential client (all of a policy's conditions must hold).
func appliesToConfidential(conds []policyCondition) bool {
	if len(conds) == 0 {
		return false
	}
	for _, cond := range conds {
		if negative, _ := cond.Configuration["is-negative-logic"].(bool); negative {
			return false
		}
		switch cond.Condition {
		case "any-client":
		case "client-access-type":
			types, _ := cond.Configuration["type"].([]any)
			if !slices.ContainsFunc(types, func(t any) bool { return t == "confidential" }) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

type clientPolicies struct {
	Policies       []clientPolicy `json:"policies"`
	GlobalPolicies []clientPolicy `json:"globalPolicies"`
}

type clientPolicy struct {
	Name       string            `json:"name"`
	Enabled    bool              `json:"enabled"`
	Conditions []policyCondition `json:"conditions"`
	Profiles   []string          `json:"profiles"`
}

type policyCondition struct {
	Condition     string         `json:"condition"`
	Configuration map[string]any `json:"configuration"`
}

type clientProfiles struct {
	Profiles       []clientProfile `json:"profiles"`
	GlobalProfiles []clientProfile `json:"globalProfiles"`
}

type clientProfile struct {
	Name      string `json:"name"`
	Executors []struct {
		Executor      string         `json:"executor"`
		Configuration map[string]any `json:"configuration"`
	} `json:"executors"`
}
