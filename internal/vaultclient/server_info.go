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

package vaultclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The products a server's health answer tells apart.
const (
	ProductVault           = "Vault"
	ProductVaultEnterprise = "Vault Enterprise"
	ProductOpenBao         = "OpenBao"
)

// ServerInfo is what a server says of itself in sys/health.
type ServerInfo struct {
	// Product is Vault, Vault Enterprise or OpenBao; empty when the answer
	// does not tell.
	Product string
	// Version as the server reports it.
	Version string
}

// health is sys/health's answer, with enterprise kept as present or not:
// Vault (since 1.13) always sends it, OpenBao never does.
type health struct {
	Initialized bool   `json:"initialized"`
	Sealed      bool   `json:"sealed"`
	Version     string `json:"version"`
	Enterprise  *bool  `json:"enterprise"`
}

// readHealth asks the server outside any namespace (OpenBao answers
// sys/health nowhere else), with the codes that make every state a 2xx
// answer, as vault/api's own Health does.
func (c *Client) readHealth(ctx context.Context) (health, error) {
	if timeout := c.root.ClientTimeout(); timeout > 0 { // 0: none, as vault/api has it
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	codes := map[string][]string{}
	for _, state := range []string{"uninitcode", "sealedcode", "standbycode", "drsecondarycode", "performancestandbycode", "removedcode", "haunhealthycode"} {
		codes[state] = []string{"299"}
	}
	resp, err := c.root.Logical().ReadRawWithDataWithContext(ctx, "sys/health", codes)
	if resp != nil {
		defer func() { _ = resp.Body.Close() }()
	}
	if err != nil {
		return health{}, err
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return health{}, err
	}
	var h health
	if err := json.Unmarshal(body, &h); err != nil {
		return health{}, fmt.Errorf("decode sys/health: %w", err)
	}
	return h, nil
}

// info names the product: Vault says whether it is Enterprise; OpenBao
// says nothing of it and numbers its releases from 2.0 (Vault's are 1.x).
func (h health) info() ServerInfo {
	info := ServerInfo{Version: h.Version}
	switch {
	case h.Enterprise != nil && *h.Enterprise:
		info.Product = ProductVaultEnterprise
	case h.Enterprise != nil:
		info.Product = ProductVault
	case majorVersion(h.Version) >= 2:
		info.Product = ProductOpenBao
	}
	return info
}

func majorVersion(version string) int {
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	return n
}
