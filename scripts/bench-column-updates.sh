#!/usr/bin/env bash
# Write amplification of a column refresh (not part of `make check`): PyIceberg
# copy-on-write on a v2 table vs column files through the lakehold library
# (clients/python) vs Lance 14 merge_insert(...).write_mode("rewrite_columns"),
# on the same 100-column data, printed side by side as a markdown table.
#
# Builds the catalog, starts it on SQLite with a file:// warehouse in a temp
# dir, runs scripts/bench-column-updates/bench.py in a venv under
# ${LAKEHOLD_CACHE:-~/.cache/lakehold} keyed by the pinned requirements, and
# stops everything. Arguments go to bench.py, e.g.
#   scripts/bench-column-updates.sh --sizes 400k,2m --runs 3
# (default: --sizes 400k; the 2M-row size takes several minutes on 2 cores;
# --help lists bench.py's options).
# CATALOG_BIN=path skips the build; PYTHON picks the interpreter (>= 3.11).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/bench-column-updates"
source "$root/integration/lib.sh" # CACHE, free_port, start_catalog

req="$here/requirements.txt"
venv="$CACHE/bench-column-updates-$(sha256sum "$req" | cut -c1-12)"
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip >&2
  "$venv/bin/pip" install -q -r "$req" >&2
  touch "$venv/.complete"
fi
# The library under test is the working tree's, installed afresh each run.
"$venv/bin/pip" install -q --force-reinstall --no-deps "$root/clients/python" >&2
"$venv/bin/pip" install -q "$root/clients/python" >&2 # its own dependencies, if new

for a in "$@"; do
  case $a in -h|--help) exec "$venv/bin/python" "$here/bench.py" --help ;; esac
done

work=$(mktemp -d /tmp/bench-column-updates.XXXXXX)
catalog_dir=
cleanup() {
  set +e
  stop_catalog
  rm -rf "$work" "$catalog_dir"
}
trap cleanup EXIT

if [ -z "${CATALOG_BIN:-}" ]; then
  export CATALOG_BIN="$work/catalog"
  (cd "$root" && go build -o "$CATALOG_BIN" ./cmd/catalog)
fi
CATALOG_TEST_DATABASE_URL='' start_catalog bench-cols bench
catalog_dir=${WAREHOUSE_DIR%/warehouse}

echo "bench-column-updates: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run" >&2
"$venv/bin/python" "$here/bench.py" --uri "$CATALOG_URI" --warehouse bench --workdir "$work" "$@"
