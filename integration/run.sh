#!/usr/bin/env bash
# The interop tier: builds the catalog, starts Postgres (unless
# CATALOG_TEST_DATABASE_URL is set) and runs real clients against the binary,
# each on a fresh database: the Java REST compatibility kit, PyIceberg
# (also on Azurite), DuckDB, Spark (also reading through server-side scan
# planning), Spark with Comet, Trino 483 and iceberg-go. Clients are installed from the
# registries into $LAKEHOLD_CACHE (default ~/.cache/lakehold), outside the
# repository.
# Prints one line per client, "CLIENT: N passed, M failed, K skipped", and
# exits non-zero on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

# Stop on exit only what this script started.
cleanup=()
trap 'rc=$?; for c in "${cleanup[@]}"; do eval "$c" || true; done; exit $rc' EXIT
if [ -z "${CATALOG_TEST_DATABASE_URL:-}" ]; then
  env_=$("$root/scripts/pg-start.sh") # set -e stops here when it fails
  eval "$(echo "$env_" | sed 's/^/export /')"
  cleanup+=("\"$root/scripts/pg-stop.sh\" $PGROOT")
fi
command -v psql >/dev/null || { echo "interop: psql is required" >&2; exit 1; }
if [ -z "${SEAWEED_S3_ENDPOINT:-}" ]; then
  env_=$("$root/scripts/seaweed-start.sh") # set -e stops here when it fails
  eval "$(echo "$env_" | sed 's/^/export /')"
  cleanup+=("\"$root/scripts/seaweed-stop.sh\" $SEAWEED_PID $SEAWEED_DIR")
fi
if [ -z "${AZURITE_BLOB_ENDPOINT:-}" ]; then
  env_=$("$root/scripts/azurite-start.sh") || { echo "interop: Azurite did not start" >&2; exit 1; }
  eval "$(echo "$env_" | sed 's/^/export /')"
  cleanup+=("\"$root/scripts/azurite-stop.sh\" $AZURITE_PID $AZURITE_DIR")
fi
export CATALOG_TEST_REQUIRE_AZURITE=1
# Every catalog started here can seal storage-profile secrets.
export CATALOG_SECRET_KEY=${CATALOG_SECRET_KEY:-$(head -c 32 /dev/urandom | base64)}

export CATALOG_BIN="$CACHE/catalog-under-test"
(cd "$root" && go build -o "$CATALOG_BIN" ./cmd/catalog) || exit 1

# Every client, installed once into $CACHE (install.sh; scripts/check.sh
# has usually run it in the background during the Go tier already).
bash "$here/install.sh" || { echo "interop: installing the clients failed" >&2; exit 1; }
venv=$PY_VENV
export SPARK_JARS="$SPARK_JAR" COMET_JARS
# Trino 483's home (assembled by install.sh; this only prints it).
TRINO_HOME=$(bash "$here/trino/assemble.sh") || { echo "interop: cannot assemble Trino 483" >&2; exit 1; }

summary=()
status=0
record() { # record OUTPUT_LINE_WITH_SUMMARY EXIT_CODE
  summary+=("$1")
  [ "$2" = 0 ] || status=1
}

# 1. Java REST compatibility kit (starts its own catalog: it needs an empty one).
out=$(bash "$here/rck/run.sh" 2>&1); rc=$?
echo "$out" | grep -E '^  (FAILED|skipped)' || true
line=$(echo "$out" | grep -E '^RCK: ' || echo "RCK: 0 passed, 1 failed, 0 skipped (runner error)")
[ $rc = 0 ] || echo "$out" | tail -20
record "$line" $rc

# 2-4. Python clients, each on a fresh catalog.
run_pytest() { # CLIENT FILE
  local client=$1 file=$2 reports; reports=$(mktemp -d /tmp/interop-reports.XXXXXX)
  start_catalog "$(echo "$client" | tr 'A-Z' 'a-z')" lake || { record "$client: 0 passed, 1 failed, 0 skipped (catalog did not start)" 1; return; }
  CATALOG_URI=$CATALOG_URI CATALOG_WAREHOUSE=lake \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$reports/junit.xml" "$here/python/$file" >"$reports/out.txt" 2>&1
  stop_catalog
  local s; s=$(python3 "$here/summarize_junit.py" "$client" "$reports"); local rc=$?
  echo "$s" | grep -E '^  ' || true
  [ $rc = 0 ] || tail -40 "$reports/out.txt"
  record "$(echo "$s" | tail -1)" $rc
}
run_pytest PyIceberg test_pyiceberg.py
run_pytest DuckDB test_duckdb.py
run_pytest Spark test_spark.py
run_pytest Spark-planning test_spark_planning.py
run_pytest column-files test_column_files.py
run_pytest v4-upgrade test_v4_upgrade.py
run_pytest v4-export test_v4_export.py
# catalog import from a second catalog, read back by PyIceberg and Spark.
run_pytest Import test_import.py
# lakehold.spark on Spark 4.1 local[2]: the library itself goes into the
# clients' venv (its dependencies are pinned there), reinstalled each run.
if "$venv/bin/pip" install -q --no-deps --force-reinstall "$root/clients/python" >/dev/null 2>&1; then
  run_pytest Spark-columns test_spark_columns.py
else
  record "Spark-columns: 0 passed, 1 failed, 0 skipped (pip install of clients/python failed)" 1
fi
run_pytest v4-guard test_v4_guard.py
run_pytest PyIceberg-vended test_vended.py
# Azure: PyIceberg on Azurite, which serves HTTPS with a throwaway
# certificate; the catalog (Go) and the clients (OpenSSL, requests) trust
# it through a bundle that also holds the system's roots.
SSL_CERT_FILE=$AZURITE_CA_BUNDLE REQUESTS_CA_BUNDLE=$AZURITE_CA_BUNDLE run_pytest Azure test_azure.py
# Remote signing: PyIceberg, and Spark with Iceberg 1.12 then 1.11 (which
# find the sign route differently), with no storage keys.
SIGNING_SPARK_JARS="$SPARK_JAR,$SPARK_AWS_JAR" run_pytest Remote-signing test_signing.py
SIGNING_SPARK_JARS="$COMET_DIR/iceberg-spark-runtime-4.1_2.13-1.11.0.jar,$COMET_DIR/iceberg-aws-bundle-1.11.0.jar" \
  run_pytest Remote-signing-1.11 test_signing.py
# The lakehold Python library (clients/python): its own venv, keyed by its
# pyproject, with PyIceberg for string filters; the tests start their own
# catalogs (SQLite + file:// and Postgres + SeaweedFS with vending).
run_lakehold_python() {
  local reports; reports=$(mktemp -d /tmp/interop-reports.XXXXXX)
  local lvenv=$LAKEHOLD_VENV
  LAKEHOLD_PYTHON="$lvenv/bin/python" # the README test runs the library's snippet with it
  # Reinstall the library itself (not its dependencies) so the tests run today's code.
  "$lvenv/bin/pip" install -q --no-deps --force-reinstall "$root/clients/python" >/dev/null 2>&1 ||
    { record "lakehold-python: 0 passed, 1 failed, 0 skipped (pip install failed)" 1; return; }
  (cd "$root/clients/python" && CATALOG_BIN=$CATALOG_BIN LAKEHOLD_TEST_REQUIRE_ALL=1 \
    "$lvenv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$reports/junit.xml" tests) >"$reports/out.txt" 2>&1
  local s; s=$(python3 "$here/summarize_junit.py" lakehold-python "$reports"); local rc=$?
  echo "$s" | grep -E '^  ' || true
  [ $rc = 0 ] || tail -40 "$reports/out.txt"
  record "$(echo "$s" | tail -1)" $rc
}
run_lakehold_python
# The platform wheel (`make wheel`, reusing $CATALOG_BIN) installed into a
# fresh venv: lakehold.local() runs the catalog shipped inside it.
run_wheel() {
  local out rc; out=$(bash "$here/wheel/check.sh" "$LAKEHOLD_VENV" 2>&1); rc=$?
  echo "$out" | grep -E '^  ' || true
  [ $rc = 0 ] || echo "$out" | tail -30
  record "$(echo "$out" | grep -E '^wheel: ' | tail -1 || echo 'wheel: 0 passed, 1 failed, 0 skipped (no summary)')" $rc
}
run_wheel
# README.md and clients/python/README.md: every fenced block run or checked against live catalogs it
# starts itself (integration/python/test_readme.py).
run_readme() {
  local reports; reports=$(mktemp -d /tmp/interop-reports.XXXXXX)
  (cd "$here/python" && CATALOG_BIN=$CATALOG_BIN LAKEHOLD_PYTHON=${LAKEHOLD_PYTHON:-} README_TEST_REQUIRE_ALL=1 \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$reports/junit.xml" test_readme.py test_python_readme.py) >"$reports/out.txt" 2>&1
  local s; s=$(python3 "$here/summarize_junit.py" README "$reports"); local rc=$?
  echo "$s" | grep -E '^  ' || true
  [ $rc = 0 ] || tail -40 "$reports/out.txt"
  record "$(echo "$s" | tail -1)" $rc
}
run_readme
# Trino: a catalog and a Trino server configured as the README shows. It
# prints the failures and, last, its "Trino: ..." line; it runs beside the
# Comet client (both are JVMs, Trino with a 1.5 GB heap, Spark with 1 GB
# off-heap), which saves about a minute.
run_trino() {
  local reports; reports=$(mktemp -d /tmp/interop-reports.XXXXXX)
  start_catalog trino lake || { echo "Trino: 0 passed, 1 failed, 0 skipped (catalog did not start)"; return 1; }
  # A second warehouse on SeaweedFS with an STS profile, for Trino's
  # catalog s3lake with vended credentials (before Trino reads its config).
  "$venv/bin/python" "$here/python/s3warehouse.py" "$CATALOG_URI" trs3 ||
    { stop_catalog; echo "Trino: 0 passed, 1 failed, 0 skipped (S3 warehouse not created)"; return 1; }
  local env; env=$(TRINO_S3_ENDPOINT=$SEAWEED_S3_ENDPOINT bash "$here/trino/start.sh" "$TRINO_HOME" "$CATALOG_URI" lake \
    lake= s3lake=@s3:trs3) ||
    { stop_catalog; echo "Trino: 0 passed, 1 failed, 0 skipped (Trino did not start)"; return 1; }
  local uri pid; uri=$(echo "$env" | sed -n 's/^TRINO_URI=//p'); pid=$(echo "$env" | sed -n 's/^TRINO_PID=//p')
  TRINO_URI=$uri CATALOG_URI=$CATALOG_URI CATALOG_WAREHOUSE=lake TRINO_S3_WAREHOUSE=trs3 SPARK_AWS_JAR=$SPARK_AWS_JAR \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$reports/junit.xml" "$here/python/test_trino.py" >"$reports/out.txt" 2>&1
  kill "$pid"; wait "$pid" 2>/dev/null
  stop_catalog
  local s; s=$(python3 "$here/summarize_junit.py" Trino "$reports"); local rc=$?
  [ $rc = 0 ] || tail -40 "$reports/out.txt"
  echo "$s"
  return $rc
}
trino_out=$(mktemp /tmp/interop-trino.XXXXXX)
(run_trino >"$trino_out" 2>&1; echo $? >"$trino_out.rc") &
trino_job=$!
run_pytest Comet test_comet.py
wait "$trino_job"
grep -v '^Trino: ' "$trino_out" || true
line=$(grep '^Trino: ' "$trino_out" | tail -1)
record "${line:-Trino: 0 passed, 1 failed, 0 skipped (no summary)}" "$(cat "$trino_out.rc" 2>/dev/null || echo 1)"

# Access control: PyIceberg and Spark with service principals, PyIceberg
# with a Keycloak token, vended credentials following the grant.
run_access() {
  local kc_started=
  if [ -z "${KEYCLOAK_ISSUER:-}" ]; then
    kc_env=$("$root/scripts/keycloak-start.sh") && eval "$(echo "$kc_env" | sed 's/^/export /')" || { record "access: 0 passed, 1 failed, 0 skipped (Keycloak did not start)" 1; return; }
    kc_started=1
  fi
  CATALOG_EXTRA_ARGS=(--auth on --oidc-issuer "$KEYCLOAK_ISSUER" --oidc-audience lakehold --bootstrap-admin builtin:admin)
  start_catalog access lake || { record "access: 0 passed, 1 failed, 0 skipped (catalog did not start)" 1; unset CATALOG_EXTRA_ARGS; return; }
  unset CATALOG_EXTRA_ARGS
  local out id secret reports; reports=$(mktemp -d /tmp/interop-reports.XXXXXX)
  out=$("$CATALOG_BIN" principal create admin "${CATALOG_DB_ARGS[@]}")
  id=$(echo "$out" | sed -n 's/^client id: *//p'); secret=$(echo "$out" | sed -n 's/^client secret: *//p')
  TRINO_HOME=$TRINO_HOME ADMIN_CREDENTIAL="$id:$secret" CATALOG_URI=$CATALOG_URI CATALOG_WAREHOUSE=lake \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$reports/junit.xml" "$here/python/test_auth.py" >"$reports/out.txt" 2>&1
  if grep -q "$secret" "$CATALOG_LOG"; then
    echo "access: the admin's client secret appears in the catalog log" >&2
    record "access: 0 passed, 1 failed, 0 skipped (secret in log)" 1
  fi
  stop_catalog
  [ -n "$kc_started" ] && "$root/scripts/keycloak-stop.sh" "$KEYCLOAK_PID" "$KEYCLOAK_DIR" && unset KEYCLOAK_ISSUER
  local s; s=$(python3 "$here/summarize_junit.py" access "$reports"); local rc=$?
  echo "$s" | grep -E '^  ' || true
  [ $rc = 0 ] || tail -40 "$reports/out.txt"
  record "$(echo "$s" | tail -1)" $rc
}
run_access

# v4 manifests: Go-written files checked by pyarrow, pyarrow-written read by Go.
golden=$(mktemp -d /tmp/v4-golden.XXXXXX)
if (cd "$root" && V4_GOLDEN_DIR="$golden" go test -count=1 -run TestWriteGolden ./v4manifest/ >/dev/null); then
  reports=$(mktemp -d /tmp/interop-reports.XXXXXX)
  V4_GOLDEN_DIR=$golden "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$reports/junit.xml" \
    "$here/python/test_v4manifest.py" >"$reports/out.txt" 2>&1
  s=$(python3 "$here/summarize_junit.py" v4manifest-pyarrow "$reports"); rc=$?
  [ $rc = 0 ] || tail -40 "$reports/out.txt"
  record "$(echo "$s" | tail -1)" $rc
else
  record "v4manifest-pyarrow: 0 passed, 1 failed, 0 skipped (golden files not written)" 1
fi

# 5. iceberg-go against the binary.
start_catalog igo lake
jsonout=$(mktemp /tmp/interop-go.XXXXXX)
(cd "$root" && CATALOG_URI=$CATALOG_URI CATALOG_WAREHOUSE=lake go test -count=1 -tags interop -json ./integration/gotest/) >"$jsonout" 2>&1
rc=$?
stop_catalog
line=$(python3 - "$jsonout" <<'PY'
import json, sys
p = f = s = 0
for raw in open(sys.argv[1]):
    try:
        ev = json.loads(raw)
    except ValueError:
        continue
    if ev.get("Test") and ev.get("Action") in ("pass", "fail", "skip"):
        if "/" in ev["Test"] or ev["Test"] not in ("TestConformance",):
            p += ev["Action"] == "pass"; f += ev["Action"] == "fail"; s += ev["Action"] == "skip"
print(f"iceberg-go: {p} passed, {f} failed, {s} skipped")
PY
)
[ $rc = 0 ] || grep -E '"Action":"output"' "$jsonout" | grep -E 'FAIL|Error' | head -20
record "$line" $rc

echo "== interop summary"
printf '%s\n' "${summary[@]}"
exit $status
