#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for tests (installing the Debian
# package when no server binaries are present) and prints
#   CATALOG_TEST_DATABASE_URL=...   PGROOT=...
# Stop it with scripts/pg-stop.sh PGROOT.
set -euo pipefail

find_pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

PGBIN=$(find_pgbin || true)
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
  echo "pg-start: installing postgresql (Debian package)" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >&2
  PGBIN=$(find_pgbin)
fi

# Ports below the kernel's ephemeral range, so that an outgoing connection
# cannot hold the port; a port that still turns out busy is skipped.
PGPORT=${PGPORT:-25432}

PGROOT=$(mktemp -d /tmp/catalog-pg.XXXXXX)
if [ "$(id -u)" = 0 ]; then
  chown postgres:postgres "$PGROOT"
  AS=(runuser -u postgres --)
else
  AS=()
fi
"${AS[@]}" "$PGBIN/initdb" -D "$PGROOT/data" -U postgres -A trust -E UTF8 --no-locale --no-sync >"$PGROOT/initdb.log" 2>&1
started=
for _ in $(seq 1 20); do
  while (exec 3<>/dev/tcp/127.0.0.1/$PGPORT) 2>/dev/null; do PGPORT=$((PGPORT + 1)); done
  if "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGROOT/data" -l "$PGROOT/server.log" -w -t 60 \
    -o "-p $PGPORT -k $PGROOT -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >&2; then
    started=1
    break
  fi
  PGPORT=$((PGPORT + 1))
done
if [ -z "$started" ]; then
  echo "pg-start: could not start PostgreSQL" >&2
  tail -20 "$PGROOT/server.log" >&2
  exit 1
fi
echo "PGROOT=$PGROOT"
echo "CATALOG_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PGPORT/postgres?sslmode=disable"
