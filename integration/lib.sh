# Shared helpers for the interop tier (sourced, not run).
# CACHE holds downloaded clients outside the repository.
CACHE=${LAKEHOLD_CACHE:-$HOME/.cache/lakehold}
mkdir -p "$CACHE"

# free_port prints a free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_catalog NAME WAREHOUSE_NAME [ALLOWED_LOCATIONS]: starts the built
# catalog on a fresh database (Postgres when CATALOG_TEST_DATABASE_URL is
# set, else SQLite) with a file:// warehouse; exports CATALOG_URI,
# WAREHOUSE_DIR and CATALOG_PID. ALLOWED_LOCATIONS, when given, becomes the
# warehouse's allowed-locations (extra prefixes tables may live under); the
# warehouse is then created through the management API, as an operator would.
# CATALOG_EXTRA_ARGS (an array) adds serve flags; CATALOG_DB_ARGS is set to
# the database flags, for CLI calls on the same catalog.
start_catalog() {
  local name=$1 wh=$2 allowed=${3:-}
  local dir; dir=$(mktemp -d "/tmp/interop-$name.XXXXXX")
  WAREHOUSE_DIR="$dir/warehouse"
  mkdir -p "$WAREHOUSE_DIR"
  local port; port=$(free_port)
  local dbflag=(--data-dir "$dir/data")
  if [ -n "${CATALOG_TEST_DATABASE_URL:-}" ]; then
    local db="interop_${name//[^a-zA-Z0-9]/_}_$RANDOM"
    psql "$CATALOG_TEST_DATABASE_URL" -q -c "CREATE DATABASE $db" >/dev/null
    dbflag=(--database-url "${CATALOG_TEST_DATABASE_URL%/*}/$db?sslmode=disable")
  fi
  local whflag=(--warehouse "$wh=file://$WAREHOUSE_DIR")
  [ -n "$allowed" ] && whflag=()
  CATALOG_DB_ARGS=("${dbflag[@]}")
  "$CATALOG_BIN" serve --listen "127.0.0.1:$port" "${dbflag[@]}" \
    "${whflag[@]}" --default-warehouse "$wh" --log-level warn ${CATALOG_EXTRA_ARGS[@]+"${CATALOG_EXTRA_ARGS[@]}"} \
    >"$dir/catalog.log" 2>&1 &
  CATALOG_PID=$!
  CATALOG_LOG="$dir/catalog.log"
  CATALOG_URI="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    if curl -sf "$CATALOG_URI/healthz" >/dev/null; then
      [ -z "$allowed" ] && return 0
      curl -sf -X POST -H 'Content-Type: application/json' "$CATALOG_URI/management/v1/warehouses" \
        -d "{\"name\":\"$wh\",\"location\":\"file://$WAREHOUSE_DIR\",\"properties\":{\"allowed-locations\":\"$allowed\"}}" \
        >/dev/null && return 0
      break
    fi
    sleep 0.1
  done
  echo "catalog did not start:" >&2
  cat "$dir/catalog.log" >&2
  return 1
}

stop_catalog() {
  [ -n "${CATALOG_PID:-}" ] && kill "$CATALOG_PID" 2>/dev/null && wait "$CATALOG_PID" 2>/dev/null
  CATALOG_PID=
}

# The interop tier's installed clients, by the inputs that key them
# (integration/install.sh installs them; run.sh and rck/run.sh use them).
root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY_VENV="$CACHE/venv-$(sha256sum "$root_dir/integration/python/requirements.txt" | cut -c1-12)"
LAKEHOLD_VENV="$CACHE/venv-lakehold-$(cat "$root_dir/clients/python/pyproject.toml" "$root_dir/clients/python/constraints.txt" | sha256sum | cut -c1-12)"
SPARK_JAR="$CACHE/spark-jars/iceberg-spark-runtime-4.1_2.13-1.12.0.jar"
# S3FileIO for Spark 1.12 on SeaweedFS (the remote-signing tests).
SPARK_AWS_JAR="$CACHE/spark-jars/iceberg-aws-bundle-1.12.0.jar"
COMET_DIR="$CACHE/comet-jars"
# Comet 1.2.0 writes natively only with Iceberg 1.11.x (see test_comet.py);
# the AWS bundle gives Spark's S3FileIO for the SeaweedFS run.
COMET_ARTIFACTS=(org.apache.datafusion:comet-spark-spark4.1_2.13:1.2.0 org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0
  org.apache.iceberg:iceberg-aws-bundle:1.11.0)
COMET_JARS="$COMET_DIR/comet-spark-spark4.1_2.13-1.2.0.jar,$COMET_DIR/iceberg-spark-runtime-4.1_2.13-1.11.0.jar,$COMET_DIR/iceberg-aws-bundle-1.11.0.jar"
RCK_LIB="$CACHE/rck-lib-1.11.0"
