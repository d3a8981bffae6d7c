//go:build tools

// Package tools pins the vault server command this module builds.
package tools

import _ "github.com/hashicorp/vault"
