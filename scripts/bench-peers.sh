#!/usr/bin/env bash
# Side-by-side peer benchmark (`make bench-peers`; not part of `make check`).
# Starts this catalog twice (embedded SQLite, and Postgres on a throwaway
# cluster unless CATALOG_TEST_DATABASE_URL is set) and the Iceberg Java REST
# fixture (RESTCatalogServer from iceberg-open-api's test-fixtures jar, a
# JdbcCatalog on a SQLite file), measures the Postgres ceiling with pgbench
# (point SELECT, single-row UPDATE), then runs cmd/loadgen against the three
# in interleaved rounds and prints ops/s, p50/p99 and ratios to the fixture.
#
# Knobs (environment): BENCH_CLIENTS (8,16), BENCH_DURATION (2s per scenario,
# target and round), BENCH_ROUNDS (3), BENCH_WARMUP (1s), BENCH_SNAPSHOTS
# (10000), PGBENCH_SECONDS (5), JAVA (java). Extra arguments go to loadgen.
# Defaults take about 6 minutes on 2 cores once the jars are cached.
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
pids+=("$CATALOG_PID"); dirs+=("${WAREHOUSE_DIR%/warehouse}"); SQLITE_URI=$CATALOG_URI
start_catalog peers-pg bench
pids+=("$CATALOG_PID"); dirs+=("${WAREHOUSE_DIR%/warehouse}"); PG_URI=$CATALOG_URI
PG_DB_URL=${CATALOG_DB_ARGS[1]} # the catalog's own database
CATALOG_PID=

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
for c in ${CLIENTS//,/ }; do
  for stmt in select update; do
    tps=$(pgbench -n -M prepared -c "$c" -j 2 -T "$PGBENCH_SECONDS" -f "$work/$stmt.sql" "$CEIL_URL" 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
    ceilings+=("$stmt@$c=$tps")
  done
done

echo "bench-peers: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run" >&2
"$work/loadgen" \
  -target "sqlite=$SQLITE_URI,warehouse=bench" \
  -target "pg=$PG_URI,warehouse=bench" \
  -target "fixture=$FX_URI" -ref fixture \
  -clients "$CLIENTS" -duration "$DURATION" -rounds "$ROUNDS" -warmup "$WARMUP" -snapshots "$SNAPSHOTS" \
  -ceilings "$(IFS=,; echo "${ceilings[*]}")" -ceiling-for pg \
  -after-setup "psql '$PG_DB_URL' -q -c 'VACUUM ANALYZE' -c CHECKPOINT" "$@"
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
