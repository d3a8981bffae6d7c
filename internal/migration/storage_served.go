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

package migration

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// storageVersionHash is what discovery publishes for a resource stored as
// group/version/kind: the first 8 bytes of the SHA-256 of "g/v/k", base64.
// It is k8s.io/apiserver's discovery.StorageVersionHash (a unit test holds
// them equal), written out to keep the API server's packages out of the
// manager.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// settleAfterSwitch is how long a migration waits once discovery shows the
// storage version: discovery and the handler that encodes the objects
// follow the CRD separately, so one says little about the other at the
// moment of a switch. (With several API servers, each follows on its own:
// the same few seconds, not a guarantee.) A migration is rare; the wait is
// cheap.
const settleAfterSwitch = 2 * time.Second

// waitStorageServed waits until the API server stores the CRD's objects in
// storage, as discovery's storageVersionHash says. A CRD update takes
// effect asynchronously: an object rewritten a moment after the storage
// version changed may still be encoded in the old one, and trimming
// storedVersions then would leave it undecodable once that version is
// retired. Without a discovery client, it does not wait.
func (m *Migrator) waitStorageServed(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) error {
	if m.Discovery == nil {
		return nil
	}
	want := storageVersionHash(crd.Spec.Group, storage, crd.Spec.Names.Kind)
	deadline := time.Now().Add(time.Minute)
	for {
		resources, err := m.Discovery.ServerResourcesForGroupVersion(crd.Spec.Group + "/" + storage)
		if err == nil {
			for _, r := range resources.APIResources {
				if r.Name != crd.Spec.Names.Plural {
					continue
				}
				if r.StorageVersionHash == want || r.StorageVersionHash == "" {
					return sleep(ctx, settleAfterSwitch)
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server does not store %s in %s yet (discovery's storageVersionHash; last error %v)", crd.Name, storage, err)
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
