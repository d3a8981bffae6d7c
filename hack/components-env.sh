#!/usr/bin/env bash
# components-env.sh SET... — builds or fetches (hack/ensure.sh) the real
# components a make target needs and prints the environment that points the
# tests at them, as shell export lines (quoted). It stops at the first
# component that fails, with ensure.sh's message and a non-zero exit: the
# Makefile assigns its output to a variable first and evals it after, so a
# failed build stops make at once instead of running the tests against
# nothing.
#
#   services  kube-apiserver and etcd (envtest), Vault, OpenBao, Keycloak
#   demo-openbao  what make demo VAULT=openbao needs: services without Vault
#   olm       what the OLM, Helm and monitoring tests add: kube-controller-manager
#             and kube-scheduler, kwok, OLM, opm, promtool, helm, the
#             Prometheus Operator's CRDs
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
"$here/prereqs.sh"
# set NAME COMPONENT [SUFFIX]: an assignment on a line of its own, so that
# a failed build stops the script (an echo's status would hide it).
set_env() {
	local dir
	dir=$("$here/ensure.sh" "$2")
	printf 'export %s=%q\n' "$1" "$dir${3:-}"
}
for set in "$@"; do
	case $set in
	services)
		set_env KUBEBUILDER_ASSETS envtest
		set_env VKO_VAULT_BIN vault-bin
		set_env VKO_BAO_BIN openbao
		set_env VKO_KEYCLOAK_HOME keycloak
		;;
	demo-openbao)
		# make demo VAULT=openbao: no Vault to build.
		set_env KUBEBUILDER_ASSETS envtest
		set_env VKO_BAO_BIN openbao
		set_env VKO_KEYCLOAK_HOME keycloak
		;;
	olm)
		set_env VKO_KUBE_DIR kube
		set_env VKO_KWOK_BIN kwok /kwok
		set_env VKO_OLM_DIR olm
		set_env VKO_OPM_BIN opm /opm
		set_env VKO_PROMTOOL promtool /promtool
		set_env VKO_HELM_BIN helm /helm
		set_env VKO_PROMETHEUS_CRDS prometheus-crds
		set_env VKO_LAST_RELEASE_MANAGER last-release /manager
		;;
	*)
		echo "components-env.sh: unknown set $set (services, demo-openbao, olm)" >&2
		exit 2
		;;
	esac
done
