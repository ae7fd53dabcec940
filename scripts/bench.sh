#!/usr/bin/env bash
# Runs the catalog benchmarks on Postgres (throwaway cluster unless
# CATALOG_TEST_DATABASE_URL is set) and on SQLite, and prints both.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CATALOG_TEST_DATABASE_URL:-}" ]; then
  eval "$(scripts/pg-start.sh | sed 's/^/export /')"
  trap 'scripts/pg-stop.sh "$PGROOT"' EXIT
fi
# The Postgres server's own CPU per operation (pg-cpu-µs/op) is reported
# when its postmaster is known: a round trip costs the database CPU too.
if [ -z "${CATALOG_BENCH_PG_PID:-}" ] && [ -n "${PGROOT:-}" ] && [ -f "$PGROOT/data/postmaster.pid" ]; then
  export CATALOG_BENCH_PG_PID=$(head -1 "$PGROOT/data/postmaster.pid")
fi
BENCHTIME=${BENCHTIME:-2s}
for backend in postgres sqlite; do
  echo "== backend: $backend"
  out=$(CATALOG_BENCH_BACKEND=$backend go test -run '^$' -bench . -benchtime "$BENCHTIME" -benchmem ./server/ | grep -E '^Benchmark')
  echo "$out"
  # Access control's cost: each auth mode against mode=off, same operation.
  echo "$out" | awk '/^BenchmarkAuthCost\/mode=/ {
      split($1, p, "/"); mode = p[2]; op = p[3]; sub(/-[0-9]+$/, "", op); ns[mode "/" op] = $3
    }
    END {
      for (k in ns) { split(k, q, "/"); if (q[1] != "mode=off" && ns["mode=off/" q[2]] > 0)
        printf "auth cost %s %s: %.2fx of mode=off\n", q[1], q[2], ns[k] / ns["mode=off/" q[2]] }
    }' | sort
done
