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

package v1beta1

import "github.com/carbogame/vault-keycloak-operator/api/ondemand"

// RefreshRequestAnnotation asks for the VaultApp's policy and role to be
// read from Vault now and brought in step, without waiting for the refresh
// interval (anyone who may edit the VaultApp may ask). The value is a
// request id (a timestamp, a change number), honoured once and echoed in
// status.lastRefreshRequest; writing a new id asks again.
const RefreshRequestAnnotation = "vault.exemple.com/refresh-request"

// PendingRefresh is the refresh request not honoured yet, "" when none.
func (a *VaultApp) PendingRefresh() string {
	return ondemand.Pending(a.Annotations, RefreshRequestAnnotation, a.Status.LastRefreshRequest)
}
