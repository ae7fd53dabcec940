#!/usr/bin/env bash
# Stops and removes a cluster started by pg-start.sh.
set -uo pipefail
PGROOT=$1
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ "$(id -u)" = 0 ]; then AS=(runuser -u postgres --); else AS=(); fi
"${AS[@]}" "$PGBIN/pg_ctl" -D "$PGROOT/data" -m fast stop >/dev/null 2>&1
rm -rf "$PGROOT"
