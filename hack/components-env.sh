#!/usr/bin/env bash
# components-env.sh SET... — builds or fetches (hack/ensure.sh) the real
# components a make target needs and prints the environment that points the
# tests at them, one NAME=VALUE a line. It stops at the first component that
# fails, with ensure.sh's message and a non-zero exit: the Makefile assigns
# its output to a variable first, so a failed build stops make at once
# instead of running the tests against nothing.
#
#   services  kube-apiserver and etcd (envtest), Vault, Keycloak
#   olm       what the OLM, Helm and monitoring tests add: kube-controller-manager
#             and kube-scheduler, kwok, OLM, opm, promtool, helm, the
#             Prometheus Operator's CRDs
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
"$here/prereqs.sh"
ensure() { "$here/ensure.sh" "$@"; }
for set in "$@"; do
	case $set in
	services)
		echo "KUBEBUILDER_ASSETS=$(ensure envtest)"
		echo "VKO_VAULT_BIN=$(ensure vault-bin)"
		echo "VKO_KEYCLOAK_HOME=$(ensure keycloak)"
		;;
	olm)
		echo "VKO_KUBE_DIR=$(ensure kube)"
		echo "VKO_KWOK_BIN=$(ensure kwok)/kwok"
		echo "VKO_OLM_DIR=$(ensure olm)"
		echo "VKO_OPM_BIN=$(ensure opm)/opm"
		echo "VKO_PROMTOOL=$(ensure promtool)/promtool"
		echo "VKO_HELM_BIN=$(ensure helm)/helm"
		echo "VKO_PROMETHEUS_CRDS=$(ensure prometheus-crds)"
		;;
	*)
		echo "components-env.sh: unknown set $set (services, olm)" >&2
		exit 2
		;;
	esac
done
