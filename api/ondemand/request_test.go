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

package ondemand

import "testing"

func TestPendingIsANewValidIDOnly(t *testing.T) {
	const key = "example.com/refresh-request"
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		last, want  string
	}{
		{"no annotation", nil, "", ""},
		{"empty value", map[string]string{key: ""}, "", ""},
		{"new id", map[string]string{key: "2026-12-02T11:00:00Z"}, "", "2026-12-02T11:00:00Z"},
		{"id already honoured", map[string]string{key: "r1"}, "r1", ""},
		{"another id after one honoured", map[string]string{key: "r2"}, "r1", "r2"},
		{"id with a space", map[string]string{key: "r 1"}, "", ""},
		{"id ending in a dash", map[string]string{key: "r1-"}, "", ""},
		{"id too long", map[string]string{key: string(make([]byte, 64))}, "", ""},
		{"another annotation", map[string]string{"example.com/other": "r1"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Pending(tc.annotations, key, tc.last); got != tc.want {
				t.Errorf("Pending = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestChangedIsTheNewIDOfAnUpdate(t *testing.T) {
	const key = "example.com/rotation-request"
	for _, tc := range []struct {
		name     string
		old, now map[string]string
		want     string
	}{
		{"no request", nil, nil, ""},
		{"first request", nil, map[string]string{key: "r1"}, "r1"},
		{"same request kept", map[string]string{key: "r1"}, map[string]string{key: "r1"}, ""},
		{"new request", map[string]string{key: "r1"}, map[string]string{key: "r2"}, "r2"},
		{"request removed", map[string]string{key: "r1"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changed(tc.old, tc.now, key); got != tc.want {
				t.Errorf("Changed = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateNamesTheAnnotation(t *testing.T) {
	err := Validate("example.com/refresh-request", "no spaces please")
	if err == nil {
		t.Fatal("an id with spaces was accepted")
	}
	if want := `metadata.annotations[example.com/refresh-request]`; err.Field != want {
		t.Errorf("field = %q, want %q", err.Field, want)
	}
	if Validate("example.com/refresh-request", "ticket-42") != nil {
		t.Error("a plain id was refused")
	}
}
