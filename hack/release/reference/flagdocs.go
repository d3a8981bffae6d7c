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

package reference

import (
	"fmt"
	"slices"
	"strings"
)

// externalEnv are the environment variables of flags bound outside the
// manager's sources, as their library documents them: controller-runtime's
// --kubeconfig falls back to KUBECONFIG (config.GetConfig).
var externalEnv = map[string]string{"kubeconfig": "KUBECONFIG"}

// managerFlags are the flags of the manager and of "manager migrate", with
// the environment variable each reads.
type managerFlags struct {
	manager, migrate []flagDoc
	env              map[string]string
	envOnly          []envVar
}

func loadFlags(src *sources, help Help) (*managerFlags, error) {
	out := &managerFlags{}
	for _, run := range []struct {
		args []string
		into *[]flagDoc
	}{{[]string{"--help"}, &out.manager}, {[]string{"migrate", "--help"}, &out.migrate}} {
		text, err := help(run.args...)
		if err != nil {
			return nil, fmt.Errorf("the manager's usage: %w", err)
		}
		if *run.into, err = parseHelp(text); err != nil {
			return nil, fmt.Errorf("manager %s: %w", strings.Join(run.args, " "), err)
		}
	}
	env, envOnly, err := flagEnvs(src)
	if err != nil {
		return nil, err
	}
	// Every flag bindFlags reads from the environment must be one the
	// manager prints: a stale build or a misread source fails here.
	for name := range env {
		if !slices.ContainsFunc(out.manager, func(f flagDoc) bool { return f.Name == name }) {
			return nil, fmt.Errorf("bindFlags declares --%s, which the manager's --help does not list", name)
		}
	}
	for name, e := range externalEnv {
		env[name] = e
	}
	out.env, out.envOnly = env, envOnly
	return out, nil
}

// writeFlags writes the manager's flags, its environment-only settings
// and the flags of "manager migrate".
func writeFlags(p *page, f *managerFlags) {
	p.heading(2, "Manager flags")
	p.line("The flags of the manager (`manager --help`, from `cmd/flags.go`, zap's logging flags and")
	p.line("controller-runtime's `--kubeconfig`). Each can also be set by its name in the ConfigMap")
	p.line("`vault-keycloak-operator-settings` of the operator's namespace ([install](install.md#settings)), except")
	p.line("`--kubeconfig`, `--operator-namespace`, `--shards` and `--shard-index`. A setting given twice resolves so:")
	p.line("the command line, then the ConfigMap, then the environment variable, then the default.")
	p.line("Defaults are those of an empty environment.\n")
	p.table([]string{"Flag", colType, colDefault, "Environment", colDescription}, flagRows(f.manager, f.env))
	if len(f.envOnly) > 0 {
		p.line("Read from the environment only:\n")
		rows := make([][]string, 0, len(f.envOnly))
		for _, e := range f.envOnly {
			rows = append(rows, []string{code(e.Name), cell(e.Doc)})
		}
		p.table([]string{"Variable", colDescription}, rows)
	}
	p.line("`manager migrate` migrates the stored objects to the storage version once and exits; its flags:\n")
	p.table([]string{"Flag", colType, colDefault, "Environment", colDescription}, flagRows(f.migrate, externalEnv))
}

func flagRows(flags []flagDoc, env map[string]string) [][]string {
	rows := make([][]string, 0, len(flags))
	for _, fl := range flags {
		rows = append(rows, []string{code("--" + fl.Name), fl.Type, code(fl.Default), code(env[fl.Name]), cell(fl.Usage)})
	}
	return rows
}
