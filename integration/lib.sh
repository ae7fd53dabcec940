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
