#!/usr/bin/env bash
# catalog.sh — renders bundle/ into the local test catalog, local-catalog/
# (make catalog), which the OLM test serves:
# an olm.package, an olm.channel, and the olm.bundle that 'opm render' makes
# of the bundle directory. Rendered from a directory, the bundle's manifests
# are inlined as olm.bundle.object properties with an empty image, which OLM
# installs without pulling a bundle image (what the tests here use). A
# catalog for a registry (release/catalog, make catalog-release) references
# the pushed bundle images instead.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
package=vault-keycloak-operator
channel=${CHANNEL:-stable}
out=local-catalog/$package
opm="$(hack/ensure.sh opm)/opm"

bundle=$("$opm" render bundle -o yaml)
csv=$(sed -n 's/^name: //p' <<<"$bundle" | head -n1)
mkdir -p "$out"
{
	cat <<YAML
---
schema: olm.package
name: $package
defaultChannel: $channel
description: Writes Vault policies and Kubernetes-auth roles for application namespaces, and copies Keycloak client secrets into Secrets.
---
schema: olm.channel
package: $package
name: $channel
entries:
- name: $csv
YAML
	echo "$bundle"
} >"$out/index.yaml"
"$opm" validate local-catalog
echo "catalog: wrote $out/index.yaml ($csv in channel $channel)"
