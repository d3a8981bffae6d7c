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

package main

import (
	"flag"
	"strings"
	"testing"
)

// TestShardFlags: the command line refuses a shard set up it cannot run,
// naming the flag and the rule, before the manager starts.
func TestShardFlags(t *testing.T) {
	for _, env := range []string{"OPERATOR_NAMESPACE", "VKO_SHARDS", "VKO_SHARD_INDEX", olmConditionEnv} {
		t.Setenv(env, "")
	}
	cases := []struct {
		name                 string
		args                 []string
		env                  map[string]string
		wantErr              string // empty: accepted, as shard wantIndex of wantCount
		wantCount, wantIndex int
	}{
		{name: "one replica needs no namespace", wantCount: 1},
		{name: "shards in the operator's namespace", args: []string{"--shards=4", "--shard-index=3", "--operator-namespace=vko-system"}, wantCount: 4, wantIndex: 3},
		{name: "the namespace from the environment", args: []string{"--shards=2"}, env: map[string]string{"OPERATOR_NAMESPACE": "vko-system"}, wantCount: 2},
		{name: "the count from the environment", env: map[string]string{"VKO_SHARDS": "2", "VKO_SHARD_INDEX": "1", "OPERATOR_NAMESPACE": "vko-system"}, wantCount: 2, wantIndex: 1},
		{name: "the flag over the environment", args: []string{"--shards=3"}, env: map[string]string{"VKO_SHARDS": "2", "OPERATOR_NAMESPACE": "vko-system"}, wantCount: 3},
		{name: "shards without a namespace", args: []string{"--shards=2"}, wantErr: "--shards=2 needs --operator-namespace"},
		{name: "an index past the count", args: []string{"--shards=2", "--shard-index=2", "--operator-namespace=vko-system"}, wantErr: "--shard-index=2: must be from 0 to 1"},
		{name: "no shard at all", args: []string{"--shards=0"}, wantErr: "--shards=0: must be at least 1"},
		{name: "more shards than hash buckets", args: []string{"--shards=257", "--operator-namespace=vko-system"}, wantErr: "--shards=257: at most 256 shards"},
		{name: "one shard under OLM", env: map[string]string{olmConditionEnv: "vault-keycloak-operator.v0.2.0", "OPERATOR_NAMESPACE": "operators"}, wantCount: 1},
		{name: "shards under OLM's one Deployment", env: map[string]string{olmConditionEnv: "vault-keycloak-operator.v0.2.0", "VKO_SHARDS": "3", "OPERATOR_NAMESPACE": "operators"},
			wantErr: "--shards=3 under OLM (OPERATOR_CONDITION_NAME is set): OLM runs one Deployment, so shards other than 0 would never run"},
		{name: "a count that is not a number", env: map[string]string{"VKO_SHARDS": "two"}, wantErr: `VKO_SHARDS="two": not an integer`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("manager", flag.ContinueOnError)
			f := bindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			opts, err := f.operatorOptions()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			case tc.wantErr == "" && (opts.Shard.Count != tc.wantCount || opts.Shard.Index != tc.wantIndex):
				t.Fatalf("shard %+v, want index %d of %d", opts.Shard, tc.wantIndex, tc.wantCount)
			}
		})
	}
}
