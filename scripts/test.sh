#!/usr/bin/env bash
# The test command: starts a throwaway Postgres unless
# CATALOG_TEST_DATABASE_URL is set, checks generated code, then runs every
# Go test (SQLite and Postgres). Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${CATALOG_TEST_DATABASE_URL:-}" ]; then
  eval "$(scripts/pg-start.sh | sed 's/^/export /')"
  trap 'scripts/pg-stop.sh "$PGROOT"' EXIT
fi
# Tests that need Postgres fail (not skip) when it is missing.
export CATALOG_TEST_REQUIRE_POSTGRES=1

scripts/check-generate.sh
go vet ./...
go test -count=1 -timeout 20m "$@" ./...
