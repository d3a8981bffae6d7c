#!/usr/bin/env bash
# Runs a test command with its output teed to a log and, when it fails, ends
# with the failed tests and their first messages: go test prints a package's
# output whole when it finishes, so a failure's lines sit above the manager's
# shutdown logs, out of reach of a CI log's tail.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if ((rc != 0)); then
	echo
	echo "=== failed tests (first messages of each; the full output is above)"
	awk '
		/--- FAIL: / { print; left = 4; tail = 0; next }
		left > 0 && /_test\.go:[0-9]+:/ { print; left--; tail = 3; next }
		tail > 0 && /^        / { print substr($0, 1, 200); tail--; next }
		/^panic: / || /^FAIL\t/ { print; tail = 0 }
	' "$log" | head -60
fi
exit "$rc"
