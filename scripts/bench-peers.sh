#!/usr/bin/env bash
# Side-by-side peer benchmark (`make bench-peers`; not part of `make check`).
# Starts this catalog twice (embedded SQLite, and Postgres on a throwaway
# cluster unless CATALOG_TEST_DATABASE_URL is set) and the Iceberg Java REST
# fixture (RESTCatalogServer from iceberg-open-api's test-fixtures jar, a
# JdbcCatalog on a SQLite file), measures the Postgres ceiling with pgbench
# (point SELECT, single-row UPDATE), then runs cmd/loadgen against the three
# in interleaved rounds and prints ops/s, p50/p99 and ratios to the fixture.
# Then the CPU per operation: a fixed number of operations per scenario sent
# to each server in interleaved rounds, counting the CPU time (utime+stime
# from /proc) of the server's process tree: our catalog's process, plus the
# whole Postgres cluster (postmaster and every backend, reaped ones included)
# for ours on Postgres, the JVM for the fixture. On shared cores the load
# generator and other work cap the rates, so this is the fairer comparison.
#
# Knobs (environment): BENCH_CLIENTS (8,16), BENCH_DURATION (2s per scenario,
# target and round), BENCH_ROUNDS (3), BENCH_WARMUP (1s), BENCH_SNAPSHOTS
# (10000), PGBENCH_SECONDS (5), JAVA (java); for the CPU phase BENCH_CPU_OPS
# (operations per round and scenario, SCENARIO=N,...; "none" skips the
# phase), BENCH_CPU_ROUNDS (3), BENCH_CPU_CLIENTS (4), BENCH_PG_PID (the
# postmaster's pid, when CATALOG_TEST_DATABASE_URL names a cluster this
# script did not start). BENCH_QUICK=1 runs only the CPU phase, with a tenth
# of the operations and 2 rounds (a few minutes; for checking the script, the
# figures are coarse). Extra arguments go to loadgen. Defaults take about 10
# minutes on 2 cores once the jars are cached.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/bench-peers"
source "$root/integration/lib.sh" # CACHE, free_port, start_catalog

CLIENTS=${BENCH_CLIENTS:-8,16}
DURATION=${BENCH_DURATION:-2s}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP:-1s}
SNAPSHOTS=${BENCH_SNAPSHOTS:-10000}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-5}
JAVA=${JAVA:-java}
CPU_OPS=${BENCH_CPU_OPS:-load-small=3000,load-big=200,commit-distinct=600,create=400,list=3000}
CPU_ROUNDS=${BENCH_CPU_ROUNDS:-3}
CPU_CLIENTS=${BENCH_CPU_CLIENTS:-4}
RATE=true
if [ -n "${BENCH_QUICK:-}" ]; then
  RATE=false
  CPU_OPS=${BENCH_CPU_OPS:-load-small=300,load-big=20,commit-distinct=60,create=40,list=300}
  CPU_ROUNDS=${BENCH_CPU_ROUNDS:-2}
fi
[ "$CPU_OPS" = none ] && CPU_OPS=

work=$(mktemp -d /tmp/bench-peers.XXXXXX)
pids=()
dirs=() # start_catalog's directories (database, warehouse, log)
own_pg=
cleanup() {
  set +e # clean up everything, whatever fails
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "$own_pg" ] && "$root/scripts/pg-stop.sh" "$PGROOT"
  rm -rf "$work" "${dirs[@]}"
}
trap cleanup EXIT

# The fixture's jars (fetched once into the cache).
LIB=$("$root/scripts/rest-fixture.sh")

export CATALOG_BIN="$work/catalog"
(cd "$root" && go build -o "$CATALOG_BIN" ./cmd/catalog && go build -o "$work/loadgen" ./cmd/loadgen)

if [ -z "${CATALOG_TEST_DATABASE_URL:-}" ]; then
  eval "$("$root/scripts/pg-start.sh" | sed 's/^/export /')"
  own_pg=1
fi
PGURL=$CATALOG_TEST_DATABASE_URL

# Ours on SQLite, then ours on a fresh Postgres database (start_catalog
# picks the store from CATALOG_TEST_DATABASE_URL).
CATALOG_TEST_DATABASE_URL='' start_catalog peers-sqlite bench
pids+=("$CATALOG_PID"); dirs+=("${WAREHOUSE_DIR%/warehouse}"); SQLITE_URI=$CATALOG_URI; SQLITE_PID=$CATALOG_PID
start_catalog peers-pg bench
pids+=("$CATALOG_PID"); dirs+=("${WAREHOUSE_DIR%/warehouse}"); PG_URI=$CATALOG_URI
PG_DB_URL=${CATALOG_DB_ARGS[1]} # the catalog's own database
PG_CATALOG_PID=$CATALOG_PID
CATALOG_PID=
# The Postgres cluster's CPU is ours too: its postmaster roots every backend.
PG_PID=${BENCH_PG_PID:-}
if [ -z "$PG_PID" ] && [ -n "${PGROOT:-}" ] && [ -f "$PGROOT/data/postmaster.pid" ]; then
  PG_PID=$(head -1 "$PGROOT/data/postmaster.pid")
fi
pg_cpu=$PG_CATALOG_PID${PG_PID:++$PG_PID}
[ -z "$PG_PID" ] && echo "bench-peers: Postgres's pid unknown (set BENCH_PG_PID): its CPU is not counted" >&2

# The fixture reads its catalog properties from CATALOG_* variables
# (CATALOG_A_B__C is a.b-c), so it runs in a clean environment. It listens
# on all interfaces (its code gives no way to choose); the port is free.
fx_port=$(free_port)
mkdir -p "$work/fixture/warehouse"
env -i PATH="$PATH" HOME="$HOME" \
  CATALOG_URI="jdbc:sqlite:file:$work/fixture/catalog.db" \
  CATALOG_WAREHOUSE="$work/fixture/warehouse" \
  CATALOG_REST_PORT="$fx_port" \
  "$JAVA" -cp "$LIB/*" org.apache.iceberg.rest.RESTCatalogServer >"$work/fixture/log" 2>&1 &
pids+=("$!")
FX_PID=$! # env execs java: this is the JVM
FX_URI="http://127.0.0.1:$fx_port"
for _ in $(seq 1 120); do curl -sf "$FX_URI/v1/config" >/dev/null && break; sleep 0.5; done
curl -sf "$FX_URI/v1/config" >/dev/null || { echo "fixture did not start:" >&2; tail -20 "$work/fixture/log" >&2; exit 1; }

# The Postgres ceiling: the same cluster, a 1000-row table, prepared
# statements (as pgx uses), the catalogs idle meanwhile.
psql "$PGURL" -q -c "CREATE DATABASE ceiling" >/dev/null
CEIL_URL="${PGURL%/*}/ceiling?sslmode=disable"
psql "$CEIL_URL" -q -c "CREATE TABLE ceiling (id int PRIMARY KEY, v bigint NOT NULL DEFAULT 0);
  INSERT INTO ceiling (id) SELECT generate_series(1, 1000);" -c "VACUUM ANALYZE ceiling" >/dev/null
printf '\\set id random(1, 1000)\nSELECT v FROM ceiling WHERE id = :id;\n' >"$work/select.sql"
printf '\\set id random(1, 1000)\nUPDATE ceiling SET v = v + 1 WHERE id = :id;\n' >"$work/update.sql"
ceilings=()
$RATE && for c in ${CLIENTS//,/ }; do
  for stmt in select update; do
    tps=$(pgbench -n -M prepared -c "$c" -j 2 -T "$PGBENCH_SECONDS" -f "$work/$stmt.sql" "$CEIL_URL" 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
    ceilings+=("$stmt@$c=$tps")
  done
done

echo "bench-peers: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run" >&2
"$work/loadgen" \
  -target "sqlite=$SQLITE_URI,warehouse=bench,cpu=$SQLITE_PID" \
  -target "pg=$PG_URI,warehouse=bench,cpu=$pg_cpu" \
  -target "fixture=$FX_URI,cpu=$FX_PID" -ref fixture \
  -clients "$CLIENTS" -duration "$DURATION" -rounds "$ROUNDS" -warmup "$WARMUP" -snapshots "$SNAPSHOTS" \
  -ceilings "$(IFS=,; echo "${ceilings[*]}")" -ceiling-for pg \
  -rate="$RATE" -cpu-ops "$CPU_OPS" -cpu-rounds "$CPU_ROUNDS" -cpu-clients "$CPU_CLIENTS" \
  -after-setup "psql '$PG_DB_URL' -q -c 'VACUUM ANALYZE' -c CHECKPOINT" "$@"
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
