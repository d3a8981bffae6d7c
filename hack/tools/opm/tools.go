//go:build tools

// Package tools pins the opm command this module builds.
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
