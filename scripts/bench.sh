#!/usr/bin/env bash
# Runs the catalog benchmarks on Postgres (throwaway cluster unless
# CATALOG_TEST_DATABASE_URL is set) and on SQLite, and prints both.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CATALOG_TEST_DATABASE_URL:-}" ]; then
  eval "$(scripts/pg-start.sh | sed 's/^/export /')"
  trap 'scripts/pg-stop.sh "$PGROOT"' EXIT
fi
BENCHTIME=${BENCHTIME:-2s}
for backend in postgres sqlite; do
  echo "== backend: $backend"
  CATALOG_BENCH_BACKEND=$backend go test -run '^$' -bench . -benchtime "$BENCHTIME" -benchmem ./server/ | grep -E '^Benchmark'
done
