#!/usr/bin/env bash
# make check, the README's test command: the Go tier (scripts/test.sh),
# then the interop tier (integration/run.sh). Meanwhile the interop
# tier's clients and Keycloak install in the background, niced
# (integration/install.sh): on a fresh machine their downloads then run
# behind the Go tier's compiles instead of after them. Extra arguments go
# to the Go tier's `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp /tmp/lakehold-install.XXXXXX)
# Its own process group, so that clean-up stops its pip and mvn too.
setsid nice -n 10 integration/install.sh >"$log" 2>&1 &
install_pid=$!
trap 'kill -- -$install_pid 2>/dev/null || true; rm -f "$log"' EXIT
scripts/test.sh "$@"
# A failed background install is not fatal here: the interop tier runs
# install.sh again and fails, with its reason, if it still fails.
wait "$install_pid" || { echo "check: the background install failed; the interop tier retries it:" >&2; tail -20 "$log" >&2; }
integration/run.sh
