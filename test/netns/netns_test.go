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

// Package netns proves that what the OLM test does to the network needs no
// root: an unprivileged user gets a network namespace of its own where it
// brings the loopback up, gives it an address and a default route, and
// routes the fake pod network — the steps of harness.SetUpOwnNetwork and
// harness.addPodNetwork. (The OLM test itself runs that way in make test.)
package netns

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/carbogame/vault-keycloak-operator/test/harness"
)

func TestAnUnprivilegedUserRoutesThePodNetworkInItsOwnNamespace(t *testing.T) {
	script := strings.Join([]string{
		"ip link set lo up",
		"ip addr add 198.51.100.1/32 dev lo",
		"ip route add default dev lo",
		"ip route add local " + harness.PodCIDR + " dev lo",
		"ip route show table local | grep -q '^local " + harness.PodCIDR + " '",
	}, " && ")
	args := []string{"unshare", "--user", "--map-root-user", "--net", "sh", "-c", script}
	if os.Geteuid() == 0 {
		// CI runs as root: drop to nobody first, as a contributor's laptop is.
		args = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, args...)
	}
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
